package check

import (
	"cmp"
	"slices"

	"github.com/reliar/reliar"
)

// Check judges one run. It never fails: the verdict is Report.Err.
func Check(in Input) Report {
	r := Report{Committed: len(in.Committed), Attempts: len(in.Attempts), LeasedLeft: in.Final.Leased, PendingLeft: in.Final.Pending, Dead: len(in.Final.Dead)}
	committed := make(map[reliar.MessageID]bool, len(in.Committed))
	for _, c := range in.Committed {
		committed[c.ID] = true
	}
	seen := make(map[reliar.MessageID]int, len(in.Committed))
	first := make(map[reliar.MessageID]int, len(in.Committed))
	for i, id := range in.Attempts {
		if !committed[id] {
			r.Unknown++
			continue
		}
		if seen[id] == 0 {
			first[id] = i
		}
		seen[id]++
	}
	dead := make(map[reliar.MessageID]bool, len(in.Final.Dead))
	for _, id := range in.Final.Dead {
		dead[id] = true
	}
	t := newTimeline(in.Events)
	for _, c := range in.Committed {
		n := seen[c.ID]
		switch {
		case n == 0 && !dead[c.ID]:
			r.Lost++
			r.LostIDs = appendCapped(r.LostIDs, c.ID)
		case n > 0:
			r.Delivered++
		}
		if n < 2 {
			continue
		}
		dups := n - 1
		r.Duplicates += dups
		hs := t.handovers(c.ID)
		for _, h := range hs[:min(dups, len(hs))] {
			r.ByWindow[h.window]++
		}
		if extra := dups - len(hs); extra > 0 {
			r.Unattributed += extra
			r.UnattributedIDs = appendCapped(r.UnattributedIDs, c.ID)
		}
	}
	if in.Ordered {
		r.OrderIDs = orderViolations(in.Committed, first, &r.OrderViolations)
	}
	return r
}

// orderViolations counts, per ordering key, the messages first seen at the
// sink before a message of the same key with a smaller sequence. Messages
// never seen are skipped (they count as lost or dead).
func orderViolations(committed []Committed, first map[reliar.MessageID]int, n *int) []reliar.MessageID {
	byKey := make(map[string][]Committed)
	for _, c := range committed {
		if _, ok := first[c.ID]; ok && c.Key != "" {
			byKey[c.Key] = append(byKey[c.Key], c)
		}
	}
	var ids []reliar.MessageID
	for _, cs := range byKey {
		slices.SortFunc(cs, func(a, b Committed) int { return cmp.Compare(a.Sequence, b.Sequence) })
		latest := -1
		for _, c := range cs {
			at := first[c.ID]
			if at < latest {
				*n++
				ids = appendCapped(ids, c.ID)
				continue
			}
			latest = at
		}
	}
	return ids
}
