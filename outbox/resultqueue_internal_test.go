package outbox

import (
	"sync"
	"testing"
	"time"
)

// Every result put reaches the loop exactly once, each producer's in the
// order it put them, whatever the interleaving of puts and takes: a put
// that finds the queue empty leaves the token the loop waits for.
func TestResultQueueDeliversEveryResultOnce(t *testing.T) {
	const producers, each = 8, 2000
	q := newResultQueue[[2]int]()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				q.put([2]int{p, i})
			}
		})
	}
	next := make([]int, producers)
	got := 0
	for got < producers*each {
		select {
		case <-q.ready:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d results taken, and no token for the rest", got, producers*each)
		}
		for _, r := range q.take() {
			if r[1] != next[r[0]] {
				t.Fatalf("producer %d: got result %d, want %d", r[0], r[1], next[r[0]])
			}
			next[r[0]]++
			got++
		}
	}
	wg.Wait()
	if rest := q.take(); len(rest) != 0 {
		t.Fatalf("%d results after the last one", len(rest))
	}
}

// A take finds nothing left over from the slice it handed out before: the
// loop may keep the previous take's slice until it takes again.
func TestResultQueueReusesItsSlices(t *testing.T) {
	q := newResultQueue[int]()
	q.put(1)
	q.put(2)
	<-q.ready
	first := q.take()
	if len(first) != 2 || first[0] != 1 || first[1] != 2 {
		t.Fatalf("first take %v", first)
	}
	select {
	case <-q.ready:
		t.Fatal("a token is left after the take of every result")
	default:
	}
	q.put(3)
	<-q.ready
	if second := q.take(); len(second) != 1 || second[0] != 3 {
		t.Fatalf("second take %v", second)
	}
	if third := q.take(); len(third) != 0 {
		t.Fatalf("third take %v, want none", third)
	}
}
