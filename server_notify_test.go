package main

import (
	"io"
	"strings"
	"testing"
)

// The notification flags: webhooks parsed from the flag or NOTIFY_WEBHOOKS (a bad URL refuses
// the start without showing it), health channels from NOTIFY_HEALTH_CHANNELS (at most 10).
func TestNotifyConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig([]string{"-notify-webhooks", "slack=https://hooks.example/a,pagerduty=http://127.0.0.1:9/p", "-notify-secret", "s"}, getenv, io.Discard)
	if err != nil || len(c.notifyWebhooks) != 2 || c.notifyWebhooks["slack"] != "https://hooks.example/a" || c.notifySecret != "s" || c.notifyEvery <= 0 {
		t.Fatalf("parseConfig = %+v, %v", c, err)
	}
	if _, err := parseConfig([]string{"-notify-webhooks", "slack=ftp://secret.example/x"}, getenv, io.Discard); err == nil || strings.Contains(err.Error(), "secret.example") {
		t.Errorf("a bad webhook: %v, want an error that does not show the URL", err)
	}
	env["NOTIFY_HEALTH_CHANNELS"] = "ops, pager,ops"
	if c, err := parseConfig(nil, getenv, io.Discard); err != nil || strings.Join(c.notifyHealthChannels, "|") != "ops|pager" {
		t.Errorf("health channels = %v, %v", c.notifyHealthChannels, err)
	}
	env["NOTIFY_HEALTH_CHANNELS"] = "c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11"
	if _, err := parseConfig(nil, getenv, io.Discard); err == nil {
		t.Error("11 health channels accepted")
	}
}
