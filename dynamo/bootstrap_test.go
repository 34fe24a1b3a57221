package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
)

func TestCreateTableIdempotentAndPing(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, smallCapabilities(3))
	if err := env.Store.CreateTable(ctx, time.Minute); err != nil {
		t.Fatalf("CreateTable(%s) a second time = %v, want nil", env.Table, err)
	}
	if err := env.Store.Ping(ctx); err != nil {
		t.Errorf("Ping() = %v, want nil", err)
	}
	if got, err := env.Store.CapabilitiesByID(ctx, []string{"CAP-T-000", "CAP-T-002"}); err != nil || got[0] == nil || got[1] == nil {
		t.Errorf("CapabilitiesByID after a second CreateTable = %v, %v; want both capabilities kept", got, err)
	}
	missing := dynamo.New(env.Client, dynamo.Options{Table: "missing-" + env.Table})
	if err := missing.Ping(ctx); err == nil {
		t.Errorf("Ping() on table %s that does not exist = nil, want an error", missing.Table())
	}
	if got := dynamo.New(env.Client, dynamo.Options{}).Table(); got != dynamo.DefaultTable {
		t.Errorf("New(Options{}).Table() = %q, want %q", got, dynamo.DefaultTable)
	}
}
