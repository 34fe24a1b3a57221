// Package notify delivers the notification outbox (dynamo/outbox.go) to webhooks.
//
// A notification is queued PENDING in the transaction that decides it (executeRules' notify
// actions, recordMetrics' health transitions). The Deliverer reads the due ones, posts each to
// its channel's webhook (configured by the operator only: NOTIFY_WEBHOOKS), signed, and writes
// it back DELIVERED, or PENDING with the next attempt after a backoff, or FAILED after
// MaxAttempts or when its channel is not configured. Delivery is at least once: a deliverer
// stopped after a receiver accepted a post and before it wrote the notification back posts it
// again, with the same delivery ID (X-Catalogue-Delivery), on which receivers de-duplicate. One
// deliverer runs at a time across the fleet (a lease).
package notify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Headers of a delivery.
const (
	HeaderSignature = "X-Catalogue-Signature"
	HeaderDelivery  = "X-Catalogue-Delivery"
)

// Lease is the name of the lease that keeps the deliverer to one instance.
const Lease = "notify-deliverer"

// MaxBody bounds the JSON body of a delivery.
const MaxBody = 64 << 10

// DefaultMaxAttempts is how many posts a notification gets before it is FAILED.
const DefaultMaxAttempts = 8

// ReplayWindow is how far a signature's timestamp may be from the receiver's clock (Verify).
const ReplayWindow = 5 * time.Minute

// ErrNotConfigured is the lastError of a notification whose channel has no webhook.
const ErrNotConfigured = "channel not configured"

// Store is what the deliverer needs of the store.
type Store interface {
	DueNotifications(ctx context.Context, now time.Time, limit int) ([]*catalog.Notification, error)
	SaveNotification(ctx context.Context, n *catalog.Notification, prevAttempts int) error
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Options configure a Deliverer.
type Options struct {
	// Webhooks maps a channel name to its webhook URL (ParseWebhooks).
	Webhooks map[string]string
	// Secret signs every body (HMAC-SHA256 of "timestamp.body"); empty sends no signature.
	Secret []byte
	// Client posts; nil means one with a 10 s timeout that follows no redirects.
	Client *http.Client
	// MaxAttempts (default DefaultMaxAttempts) posts before FAILED.
	MaxAttempts int
	// Backoff returns the wait after failed attempt n (1-based); default 30 s × 2^(n-1), at
	// most an hour.
	Backoff func(n int) time.Duration
	// Batch is how many due notifications one pass reads (default 20).
	Batch int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Registerer, when set, gets the counters catalogue_notifications_{delivered,failed,retried}_total.
	Registerer prometheus.Registerer
	// AfterPost, when set, runs after a receiver accepted a post and before the notification
	// is written back; an error stops the pass there (tests: a deliverer stopped mid-delivery).
	AfterPost func(n *catalog.Notification) error
}

// Deliverer posts the outbox's due notifications.
type Deliverer struct {
	store Store
	opts  Options
	// counters
	delivered, failed, retried prometheus.Counter
}

// New returns a Deliverer.
func New(store Store, opts Options) *Deliverer {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Backoff == nil {
		opts.Backoff = func(n int) time.Duration {
			return min(30*time.Second<<min(n-1, 10), time.Hour)
		}
	}
	if opts.Batch <= 0 {
		opts.Batch = 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Deliverer{store: store, opts: opts,
		delivered: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_notifications_delivered_total",
			Help: "Notifications a webhook accepted."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_notifications_failed_total",
			Help: "Notifications given up: channel not configured, or every attempt failed."}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_notifications_retried_total",
			Help: "Failed attempts that will be tried again after a backoff."}),
	}
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(d.delivered, d.failed, d.retried)
	}
	return d
}

// Result is what one pass did.
type Result struct {
	Delivered, Failed, Retried int
}

// RunOnce delivers the notifications due now, one at a time, and returns what it did. It does
// not take the lease (Run does).
func (d *Deliverer) RunOnce(ctx context.Context) (Result, error) {
	var res Result
	due, err := d.store.DueNotifications(ctx, d.opts.Now(), d.opts.Batch)
	if err != nil {
		return res, err
	}
	for _, n := range due {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		outcome, err := d.deliver(ctx, n)
		if err != nil {
			return res, err
		}
		switch outcome {
		case catalog.NotificationDelivered:
			res.Delivered++
			d.delivered.Inc()
		case catalog.NotificationFailed:
			res.Failed++
			d.failed.Inc()
		case catalog.NotificationPending:
			res.Retried++
			d.retried.Inc()
		}
	}
	return res, nil
}

// deliver posts n once and writes it back; "" means another deliverer wrote it first.
func (d *Deliverer) deliver(ctx context.Context, n *catalog.Notification) (catalog.NotificationStatus, error) {
	prev := n.Attempts
	target, ok := d.opts.Webhooks[n.Channel]
	if ok {
		n.Attempts++ // a channel not configured is posted nothing: not an attempt
	}
	var failure string
	if !ok {
		failure = ErrNotConfigured
	} else if err := d.post(ctx, target, n); err != nil {
		failure = sanitise(err, target)
	} else if d.opts.AfterPost != nil {
		if err := d.opts.AfterPost(n); err != nil {
			return "", err
		}
	}
	now := d.opts.Now()
	switch {
	case failure == "":
		n.Status, n.LastError, n.NextAttemptAt = catalog.NotificationDelivered, nil, nil
		at := catalog.NewTimestamp(now)
		n.DeliveredAt = &at
	case !ok || n.Attempts >= d.opts.MaxAttempts:
		n.Status, n.LastError, n.NextAttemptAt = catalog.NotificationFailed, &failure, nil
	default:
		next := catalog.NewTimestamp(now.Add(d.opts.Backoff(n.Attempts)))
		n.LastError, n.NextAttemptAt = &failure, &next
	}
	status := n.Status
	if err := d.store.SaveNotification(ctx, n, prev); err != nil {
		if errors.Is(err, dynamo.ErrNotificationMoved) {
			return "", nil
		}
		return "", err
	}
	return status, nil
}

// Body is the JSON a webhook receives.
type Body struct {
	DeliveryID   string         `json:"deliveryId"`
	Kind         string         `json:"kind"`
	Capability   string         `json:"capability"`
	Rule         *BodyRule      `json:"rule,omitempty"`
	Severity     *string        `json:"severity,omitempty"`
	Score        *int           `json:"score,omitempty"`
	Template     *string        `json:"template,omitempty"`
	InputSummary map[string]any `json:"inputSummary,omitempty"`
	Channel      string         `json:"channel"`
	CreatedAt    string         `json:"createdAt"`
	Attempt      int            `json:"attempt"`
}

// BodyRule names the rule of a rule notification.
type BodyRule struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// body encodes n's Body.
func body(n *catalog.Notification) ([]byte, error) {
	b := Body{DeliveryID: n.DeliveryID, Kind: n.Kind, Capability: n.CapabilityID, Severity: n.Severity, Score: n.Score,
		Template: n.Template, InputSummary: n.InputSummary, Channel: n.Channel,
		CreatedAt: n.CreatedAt.UTC().Format(time.RFC3339Nano), Attempt: n.Attempts}
	if n.RuleID != nil {
		b.Rule = &BodyRule{ID: *n.RuleID}
		if n.RuleName != nil {
			b.Rule.Name = *n.RuleName
		}
	}
	return json.Marshal(b)
}

func (d *Deliverer) post(ctx context.Context, target string, n *catalog.Notification) error {
	b, err := body(n)
	if err != nil {
		return err
	}
	if len(b) > MaxBody {
		return fmt.Errorf("body of %d bytes is over the %d limit", len(b), MaxBody)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "capability-catalogue-notify/1")
	req.Header.Set(HeaderDelivery, n.DeliveryID)
	if len(d.opts.Secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(d.opts.Secret, d.opts.Now(), b))
	}
	resp, err := d.opts.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return nil
}

// sanitise returns err's text without the webhook URL (which may hold a secret path or query).
func sanitise(err error, target string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := strings.ReplaceAll(err.Error(), target, "<webhook>")
	if u, perr := url.Parse(target); perr == nil {
		if u.RawQuery != "" {
			msg = strings.ReplaceAll(msg, u.RawQuery, "<query>")
		}
		if u.Path != "" && u.Path != "/" {
			msg = strings.ReplaceAll(msg, u.Path, "<path>")
		}
	}
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}

// Sign returns the X-Catalogue-Signature of body sent at t: "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<unix seconds>.<body>" with secret>".
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery's signature header against body as a receiver should: the HMAC
// matches (compared in constant time) and the timestamp is within window of now (ReplayWindow
// when window is 0), so that a captured delivery cannot be replayed later. Receivers also
// de-duplicate on X-Catalogue-Delivery: a delivery may come more than once.
func Verify(secret []byte, header string, body []byte, now time.Time, window time.Duration) error {
	if window <= 0 {
		window = ReplayWindow
	}
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.New("malformed signature header")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > window || d < -window {
		return errors.New("signature timestamp outside the replay window")
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, ts, body))) {
		return errors.New("signature does not match")
	}
	return nil
}

// ParseWebhooks reads "name=url,name=url" (NOTIFY_WEBHOOKS); an entry that starts with '@'
// names a file of such entries, one per line ('#' starts a comment). URLs must be absolute
// http or https URLs; a name may appear once.
func ParseWebhooks(spec string) (map[string]string, error) {
	out := map[string]string{}
	var add func(entry string) error
	add = func(entry string) error {
		entry = strings.TrimSpace(entry)
		if entry == "" || strings.HasPrefix(entry, "#") {
			return nil
		}
		if path, ok := strings.CutPrefix(entry, "@"); ok {
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("notify webhooks file: %w", err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if strings.HasPrefix(strings.TrimSpace(sc.Text()), "@") {
					return errors.New("notify webhooks file: a file may not name another")
				}
				if err := add(sc.Text()); err != nil {
					return err
				}
			}
			return sc.Err()
		}
		name, raw, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || !catalog.ValidID(name) {
			return fmt.Errorf("notify webhooks: want name=url, got %q", redact(entry))
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("notify webhooks: channel %s needs an absolute http(s) URL", name)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("notify webhooks: channel %s given twice", name)
		}
		out[name] = u.String()
		return nil
	}
	for _, e := range strings.Split(spec, ",") {
		if err := add(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// redact keeps the name of an entry and drops what could be a URL.
func redact(entry string) string {
	if name, _, ok := strings.Cut(entry, "="); ok {
		return name + "=…"
	}
	if len(entry) > 20 {
		return entry[:20] + "…"
	}
	return entry
}

// Run delivers every `every` while ctx lives, holding the lease while it does: an instance
// that cannot take the lease skips the pass. done, when set, gets each pass's result.
func (d *Deliverer) Run(ctx context.Context, every time.Duration, holder string, done func(Result, error)) {
	dynamo.EveryWithLease(ctx, d.store, Lease, holder, every, func(ctx context.Context, acquire func(context.Context) (bool, error)) {
		held, err := acquire(ctx)
		if err != nil || !held {
			if done != nil && err != nil {
				done(Result{}, err)
			}
			return
		}
		res, err := d.RunOnce(ctx)
		if done != nil {
			done(res, err)
		}
	})
}
