package budget

import (
	"sync"
	"testing"
)

func TestBudget(t *testing.T) {
	var b Budget
	for range 1000 {
		if !b.Spend() {
			t.Fatal("an unbounded budget refused a call")
		}
	}
	b = Budget{}
	b.Limit(10)
	var mu sync.Mutex
	spent := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b.Spend() {
				mu.Lock()
				spent++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if spent != 10 {
		t.Errorf("%d calls spent of a budget of 10", spent)
	}
}
