package memstore

// This file keeps the indexes in step with each row's state. Callers change a
// row's fields (available_at, lease, dead_at, ...) and then call move, which
// takes the row out of the index of its old state and files it under the new
// one. s.mu must be held throughout.

// insert files a new pending row.
func (s *Store) insert(r *row) {
	s.rows[r.enc.ID] = r
	r.state = parked // not in any index yet; move files it
	s.pending[r.enc.ID] = r
	s.move(r, ready)
}

// delete forgets a terminal row.
func (s *Store) delete(r *row) {
	s.leave(r)
	delete(s.rows, r.enc.ID)
}

// move files r under state to.
func (s *Store) move(r *row, to state) {
	wasPending, wasKeyed := r.pending(), r.blocksKey()
	s.leave(r)
	r.state = to
	switch to {
	case ready:
		s.ready.add(r)
		if r.key == "" {
			s.heads.add(r)
		}
		if r.expiresAt != nil {
			s.expiring.add(r)
		}
	case leased:
		s.leased.add(r)
	case published:
		s.published.add(r)
	case dead:
		s.dead.add(r)
	}
	switch {
	case wasPending && !r.pending():
		delete(s.pending, r.enc.ID)
	case !wasPending && r.pending():
		s.pending[r.enc.ID] = r
	}
	switch {
	case wasKeyed && !r.blocksKey():
		s.leaveKey(r)
	case !wasKeyed && r.blocksKey():
		s.joinKey(r)
	}
	s.refreshHead(r.key)
}

// leave takes r out of the index of its current state.
func (s *Store) leave(r *row) {
	switch r.state {
	case ready:
		s.ready.remove(r)
		s.expiring.remove(r)
		if r.idx[idxHeads] >= 0 {
			s.heads.remove(r)
			if r.key != "" {
				delete(s.headOf, r.key)
			}
		}
	case leased:
		s.leased.remove(r)
	case published:
		s.published.remove(r)
	case dead:
		s.dead.remove(r)
	}
}

func (s *Store) joinKey(r *row) {
	if r.key == "" {
		return
	}
	h := s.keys[r.key]
	if h == nil {
		h = newRowHeap(idxKey, bySequence)
		s.keys[r.key] = h
	}
	h.add(r)
}

func (s *Store) leaveKey(r *row) {
	if r.key == "" {
		return
	}
	if h := s.keys[r.key]; h != nil {
		h.remove(r)
		if h.Len() == 0 {
			delete(s.keys, r.key)
		}
	}
}

// refreshHead makes the heads index hold the head of key (its row of
// smallest sequence among those that block the key) exactly when that row is
// ready: a head that is leased or scheduled for a retry blocks the rest of
// its key. A parked row (expired, no live lease) can never be published and
// blocks nothing, as on PostgreSQL.
func (s *Store) refreshHead(key string) {
	if key == "" || s.frozen[key] {
		return
	}
	var want *row
	if h := s.keys[key]; h != nil {
		if top := h.peek(); top != nil && top.state == ready {
			want = top
		}
	}
	cur := s.headOf[key]
	if cur == want {
		return
	}
	if cur != nil {
		s.heads.remove(cur)
		delete(s.headOf, key)
	}
	if want != nil {
		s.heads.add(want)
		s.headOf[key] = want
	}
}
