package ratelimit

import "testing"

func TestDecide(t *testing.T) {
	p := params{interval: 10, tolerance: 30} // 1 per 10 units, burst 3
	shaped := params{interval: 10, tolerance: 10, maxDelay: 25}
	tests := []struct {
		name      string
		now       int64
		ps        []params
		tats      []int64
		ok        bool
		delay     int64
		retry     int64
		wantTATs  []int64
		wantState []policyState
	}{
		{"idle key", 100, []params{p}, []int64{0}, true, 0, 0, []int64{110}, []policyState{{2, 10}}},
		{"last of the burst", 100, []params{p}, []int64{120}, true, 0, 0, []int64{130}, []policyState{{0, 10}}},
		{"over the burst", 100, []params{p}, []int64{130}, false, 0, 10, []int64{130}, []policyState{{0, 10}}},
		{"refilled", 110, []params{p}, []int64{130}, true, 0, 0, []int64{140}, []policyState{{0, 10}}},
		{"shaped: held for the slot", 100, []params{shaped}, []int64{110}, true, 10, 0, []int64{120}, []policyState{{0, 20}}},
		{"shaped: last slot within max delay", 100, []params{shaped}, []int64{125}, true, 25, 0, []int64{135}, []policyState{{0, 35}}},
		{"shaped: beyond max delay", 100, []params{shaped}, []int64{126}, false, 0, 1, []int64{126}, []policyState{{0, 26}}},
		{"one rejects: none consumed", 100, []params{p, p}, []int64{0, 130}, false, 0, 10, []int64{0, 130},
			[]policyState{{3, 0}, {0, 10}}},
		{"both admit", 100, []params{p, p}, []int64{0, 110}, true, 0, 0, []int64{110, 120}, []policyState{{2, 10}, {1, 20}}},
		{"delay of one policy moves the other's slot", 100, []params{shaped, p}, []int64{110, 0}, true, 10, 0,
			[]int64{120, 120}, []policyState{{0, 20}, {1, 20}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tats := append([]int64(nil), tt.tats...)
			states := make([]policyState, len(tt.ps))
			ok, delay, retry := decide(tt.now, tt.ps, tats, states)
			if got, want := [3]int64{b2i(ok), delay, retry}, [3]int64{b2i(tt.ok), tt.delay, tt.retry}; got != want {
				t.Errorf("ok, delay, retry = %v, want %v", got, want)
			}
			for i := range tats {
				if got, want := tats[i], tt.wantTATs[i]; got != want {
					t.Errorf("tat[%d] = %d, want %d", i, got, want)
				}
				if got, want := states[i], tt.wantState[i]; got != want {
					t.Errorf("state[%d] = %+v, want %+v", i, got, want)
				}
			}
		})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestDecideLongRun checks that back-to-back requests are admitted at burst + elapsed/interval, never more.
func TestDecideLongRun(t *testing.T) {
	p := params{interval: 7, tolerance: 7 * 5, maxDelay: 20}
	tats := []int64{0}
	admitted := 0
	for now := int64(1000); now < 1000+7000; now++ {
		if ok, _, _ := decide(now, []params{p}, tats, nil); ok {
			admitted++
		}
	}
	// 7000 units at one per 7: 1000 slots, plus the burst, plus the slots up to maxDelay ahead.
	if got, want := admitted, 1000+5+20/7; got != want {
		t.Errorf("admitted %d, want %d", got, want)
	}
}

func FuzzDecide(f *testing.F) {
	f.Add(int64(100), int64(10), int64(3), int64(0), int64(0), int64(50))
	f.Add(int64(5), int64(1), int64(1), int64(4), int64(1000), int64(1))
	f.Fuzz(func(t *testing.T, now, interval, burst, maxDelay, tat, interval2 int64) {
		for _, v := range [][3]int64{{now, 0, 1 << 50}, {interval, 1, 1 << 30}, {burst, 1, 1 << 10},
			{maxDelay, 0, 1 << 30}, {tat, 0, 1 << 52}, {interval2, 1, 1 << 30}} {
			if v[0] < v[1] || v[0] > v[2] {
				return // beyond the numbers a policy can have
			}
		}
		ps := []params{{interval, interval * burst, maxDelay}, {interval2, interval2, 0}}
		tats := []int64{tat, 0}
		states := make([]policyState, 2)
		ok, delay, retry := decide(now, ps, tats, states)
		checkDecision(t, ok, delay, retry, maxDelay, max(tat, now), tat, tats[0])
		for i, s := range states {
			if s.remaining < 0 || s.reset < 0 || (i == 0 && s.remaining > burst) {
				t.Fatalf("state %d = %+v", i, s)
			}
		}
	})
}

// checkDecision checks one decision of FuzzDecide for the first policy: admitted within its max delay, with its
// TAT moved past base (the later of the old TAT and now), or rejected with a retry and the TAT unchanged.
func checkDecision(t *testing.T, ok bool, delay, retry, maxDelay, base, oldTAT, newTAT int64) {
	t.Helper()
	switch {
	case ok && (delay < 0 || delay > maxDelay || retry != 0):
		t.Fatalf("admitted with delay %d (max %d), retry %d", delay, maxDelay, retry)
	case !ok && (retry <= 0 || delay != 0 || newTAT != oldTAT):
		t.Fatalf("rejected with retry %d, delay %d, tat %d -> %d", retry, delay, oldTAT, newTAT)
	case ok && newTAT <= base:
		t.Fatalf("admitted without consuming: tat %d -> %d", oldTAT, newTAT)
	}
}
