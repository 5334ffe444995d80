package main

import (
	"container/list"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConnLimiterOrder checks the order of the idle and fresh lists as
// connections change state, leaving out the active connections that
// victimLocked passes over: the victim is the connection idle the longest,
// then the oldest fresh one, and a connection that becomes idle again goes
// to the back.
func TestConnLimiterOrder(t *testing.T) {
	type step struct {
		conn  int
		state http.ConnState
	}
	for _, tc := range []struct {
		name      string
		steps     []step
		wantIdle  []int
		wantFresh []int
	}{
		{"all fresh", nil, nil, []int{0, 1, 2}},
		{"idle in the order they became idle", []step{{2, http.StateIdle}, {0, http.StateIdle}}, []int{2, 0}, []int{1}},
		{"idle again goes to the back", []step{{0, http.StateIdle}, {1, http.StateIdle}, {0, http.StateActive}, {0, http.StateIdle}}, []int{1, 0}, []int{2}},
		{"active is passed over", []step{{1, http.StateActive}, {0, http.StateIdle}, {2, http.StateActive}}, []int{0}, nil},
		{"the first idle one is passed over", []step{{0, http.StateIdle}, {1, http.StateIdle}, {0, http.StateActive}}, []int{1}, []int{2}},
		{"all active", []step{{0, http.StateActive}, {1, http.StateActive}, {2, http.StateActive}}, nil, nil},
		{"the middle one leaves", []step{{0, http.StateIdle}, {1, http.StateIdle}, {2, http.StateIdle}, {1, http.StateActive}}, []int{0, 2}, nil},
		{"closed leaves", []step{{0, http.StateIdle}, {1, http.StateIdle}, {0, http.StateClosed}}, []int{1}, []int{2}},
		{"hijacked leaves", []step{{0, http.StateHijacked}}, nil, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := limitListener(nil, 3)
			cs := make([]*limitedConn, 3)
			index := map[*limitedConn]int{}
			for i := range cs {
				cs[i] = &limitedConn{l: l}
				index[cs[i]] = i
				l.track(cs[i], http.StateNew)
			}
			for _, s := range tc.steps {
				l.track(cs[s.conn], s.state)
			}
			walk := func(q *list.List, state http.ConnState) (got []int) {
				for e := q.Front(); e != nil; e = e.Next() {
					if lc := e.Value.(*limitedConn); lc.state == state {
						got = append(got, index[lc])
					}
				}
				return got
			}
			if diff := cmp.Diff(tc.wantIdle, walk(&l.idle, http.StateIdle)); diff != "" {
				t.Errorf("idle list (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFresh, walk(&l.fresh, http.StateNew)); diff != "" {
				t.Errorf("fresh list (-want +got):\n%s", diff)
			}
			victim, _ := l.victimLocked(time.Now().Add(time.Hour))
			want := -1
			if len(tc.wantIdle) > 0 {
				want = tc.wantIdle[0]
			} else if len(tc.wantFresh) > 0 {
				want = tc.wantFresh[0]
			}
			if got := index[victim]; victim == nil && want != -1 || victim != nil && got != want {
				t.Errorf("victim = %d (%v), want %d", got, victim != nil, want)
			}
		})
	}
}

// deadlineConn is a net.Conn that records the write deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

// TestWritePace: each write gets between writeGrace and one and a half
// times that to drain, never past the deadline set for the answer, which
// applies at once when it is earlier than the one in force; the deadline
// underneath moves only when it must.
func TestWritePace(t *testing.T) {
	under := &deadlineConn{}
	c := &limitedConn{Conn: under}
	t0 := time.Unix(1_800_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const g = writeGrace
	var want []time.Time

	c.pace(at(0)) // the first write
	want = append(want, at(g+g/2))
	c.pace(at(time.Second)) // still has more than g: unchanged
	c.pace(at(g/2 + time.Second))
	want = append(want, at(g/2+time.Second+g+g/2)) // had less than g: moved
	end := at(g/2 + 2*time.Second)
	c.SetWriteDeadline(end) // earlier than the one in force: at once
	want = append(want, end)
	c.pace(at(g/2 + 1500*time.Millisecond)) // never past end: unchanged
	c.SetWriteDeadline(time.Time{})         // no deadline as a whole
	c.pace(at(2 * g))
	want = append(want, at(2*g+g+g/2))
	c.SetWriteDeadline(at(10 * g)) // later than the one in force: kept for later writes
	c.pace(at(9*g + g/2))
	want = append(want, at(10*g))

	if diff := cmp.Diff(want, under.set); diff != "" {
		t.Errorf("write deadlines set (-want +got):\n%s", diff)
	}
}
