package tune

import (
	"runtime/debug"
	"testing"
)

func TestGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := GC(getenv); got != DefaultGCPercent {
		t.Fatalf("GC() without GOGC = %d, want %d", got, DefaultGCPercent)
	}
	if cur := debug.SetGCPercent(100); cur != DefaultGCPercent {
		t.Fatalf("GOGC in effect = %d, want %d", cur, DefaultGCPercent)
	}
	for v, want := range map[string]int{"150": 150, "off": -1, "x": 100} {
		env["GOGC"] = v
		if got := GC(getenv); got != want {
			t.Errorf("GC() with GOGC=%s = %d, want %d", v, got, want)
		}
		if cur := debug.SetGCPercent(100); cur != 100 {
			t.Errorf("GC() with GOGC=%s changed the setting to %d: the runtime already applied it", v, cur)
		}
	}
}
