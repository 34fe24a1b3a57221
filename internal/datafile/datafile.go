// Package datafile keeps the data of the embedded default (the in-process DynamoDB and S3) in a
// file, so that it survives a restart: loaded at start, saved atomically within a second of
// every write and once more on close.
//
// The file is JSON lines:
//
//	{"format":"capcat-catalogue-data","version":1,"savedAt":"2026-12-01T08:00:00.000000Z"}
//	{"item":{"CreatedAt":{"S":"..."},"Data":{"M":{...}},"PK":{"S":"..."},...}}     every table item, by key
//	{"object":{"bucket":"...","key":"...","etag":"...","size":12,"lastModified":"...","metadata":{...},"blob":"<sha256>"}}
//	{"end":{"items":1234,"objects":6}}
//
// Table items are whole, in DynamoDB JSON, idempotency tokens, claims, leases and state
// included: a restarted server answers a retried request as the first one did. Object bodies
// live beside the file in FILE.objects/, one file per distinct content named by its SHA-256,
// written before the file that names them. A save takes a consistent snapshot of both stores
// (writes wait while it reads them), writes FILE.tmp, syncs it and renames it over FILE: a
// crash at any moment leaves the previous file or the new one, never a mix. The last line
// counts what the file holds, so a file cut short is refused, like any other damage, by Load:
// the server never starts empty over a file it could not read.
package datafile

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Format names the file's format in its first line.
const Format = "capcat-catalogue-data"

// version is the format's version: Load refuses others.
const version = 1

// DefaultDelay is how long after a write the save starts: writes of the next moment join it,
// and the file stays within a second of the stores.
const DefaultDelay = 300 * time.Millisecond

// Modes of what the file keeps: the catalogue is nobody else's to read.
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// blobName is how a body file is named: its content's SHA-256, in hex.
var blobName = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Options configure a File.
type Options struct {
	// Delay is how long after a write a save starts; 0 means DefaultDelay.
	Delay time.Duration
	// Logger receives failed saves; nil means slog.Default().
	Logger *slog.Logger
}

// File is a data file and what it saves: the table of a dynamo.Store and the objects of a
// blob.Embedded.
type File struct {
	path, objects string
	exists        bool
	delay         time.Duration
	log           *slog.Logger
	unlock        func() error

	table *dynamo.Store
	store *blob.Embedded

	// gate is held shared by every write to the stores, and exclusively by a save while it
	// reads them: a save sees no write half done.
	gate sync.RWMutex
	// pending reports a write since the last save's snapshot; dirty wakes the saver.
	pending atomic.Bool
	dirty   chan struct{}
	// changed holds the keys of the items written since the last snapshot, which reads only
	// those; full asks it to read the whole table instead (at first, and after a write whose
	// keys could not be told).
	changedMu sync.Mutex
	changed   map[dynamo.ItemKey]bool
	full      bool

	// saveMu serialises saves. Under it, items holds the table as last saved, each item as
	// its line, and blobs names the body file of each object saved, by bucket, key and ETag,
	// so that unchanged objects are not read again.
	saveMu sync.Mutex
	items  map[dynamo.ItemKey][]byte
	blobs  map[objectID]string

	stop, done chan struct{}
	started    bool
	closeOnce  sync.Once
	closeErr   error
}

type objectID struct{ bucket, key, etag string }

// Open prepares the data file at path: it creates the directory of object bodies beside it
// (path + ".objects") and takes a lock on it, so that two processes never save over each other.
// It reads nothing yet: see Exists and Load.
func Open(path string, opts Options) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	f := &File{path: abs, objects: abs + ".objects", delay: opts.Delay, log: opts.Logger,
		dirty: make(chan struct{}, 1), changed: map[dynamo.ItemKey]bool{}, full: true, blobs: map[objectID]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if f.delay <= 0 {
		f.delay = DefaultDelay
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	switch st, err := os.Stat(abs); {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("data file %s is a directory", abs)
	case err == nil:
		f.exists = true
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("data file: %w", err)
	}
	if err := os.Mkdir(f.objects, dirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("data file: %w", err)
	}
	if f.unlock, err = lockDir(f.objects); err != nil {
		return nil, fmt.Errorf("data file %s: %w", abs, err)
	}
	return f, nil
}

// Path returns the file's absolute path.
func (f *File) Path() string { return f.path }

// ObjectsDir returns the directory of the object bodies.
func (f *File) ObjectsDir() string { return f.objects }

// Exists reports whether the file existed when it was opened.
func (f *File) Exists() bool { return f.exists }

// Bind sets what the file saves and loads: the table of table, and the objects of store (nil
// when the object store is not the embedded one).
func (f *File) Bind(table *dynamo.Store, store *blob.Embedded) { f.table, f.store = table, store }

// dynamoWrite reports whether a DynamoDB operation changes data.
func dynamoWrite(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

// WatchDynamoDB wraps the embedded DynamoDB's handler (dynamo.StartEmbedded's wrap): every
// write holds the gate while it runs, notes the keys it writes, and schedules a save.
func (f *File) WatchDynamoDB(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get("X-Amz-Target")
		op = op[strings.LastIndexByte(op, '.')+1:]
		if !dynamoWrite(op) {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		keys, known := dynamo.WrittenKeys(op, body)
		f.gate.RLock()
		defer f.gate.RUnlock()
		// Even a write that fails may have changed something (a rolled-back transaction):
		// every write is followed by a save of what it may have touched.
		defer f.wrote(keys, known)
		h.ServeHTTP(w, r)
	})
}

// WatchS3 wraps the embedded S3's handler (blob.OpenEmbeddedWrapped's wrap): every request
// that may change an object holds the gate while it runs, and schedules a save. (Creating a
// bucket does not: the server creates its buckets at every start.)
func (f *File) WatchS3(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		createBucket := r.Method == http.MethodPut && !strings.Contains(strings.Trim(r.URL.Path, "/"), "/")
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions || createBucket {
			h.ServeHTTP(w, r)
			return
		}
		f.gate.RLock()
		defer f.gate.RUnlock()
		defer f.wrote(nil, true)
		h.ServeHTTP(w, r)
	})
}

// wrote notes the keys of the table items a write changed (known false: it could not tell
// which, and the next save reads the whole table), and schedules a save.
func (f *File) wrote(keys []dynamo.ItemKey, known bool) {
	f.changedMu.Lock()
	for _, k := range keys {
		f.changed[k] = true
	}
	f.full = f.full || !known
	f.changedMu.Unlock()
	f.pending.Store(true)
	select {
	case f.dirty <- struct{}{}:
	default:
	}
}

// Start saves within a second of every write from now on, in a goroutine of its own, until
// Close.
func (f *File) Start() {
	f.started = true
	go f.saver()
}

func (f *File) saver() {
	defer close(f.done)
	for {
		select {
		case <-f.stop:
			return
		case <-f.dirty:
		}
		t := time.NewTimer(f.delay)
		select {
		case <-f.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if err := f.Save(context.Background()); err != nil {
			f.log.Error("data file not saved; retrying after the next write", "file", f.path, "err", err)
		}
	}
}

// Close stops the saver, saves what changed since the last save (when the saver was started:
// a File that never started has nothing of its own to save), and releases the lock. It returns
// the error of that last save. Later calls do nothing.
func (f *File) Close() error {
	f.closeOnce.Do(func() {
		var err error
		if f.started {
			close(f.stop)
			<-f.done
			if f.pending.Load() {
				// The last save reads the whole table: what a clean stop keeps does not
				// depend on the writes' keys having been told right.
				f.changedMu.Lock()
				f.full = true
				f.changedMu.Unlock()
				err = f.Save(context.Background())
			}
		}
		f.closeErr = errors.Join(err, f.unlock())
	})
	return f.closeErr
}

// header is the first line of the file.
type header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	SavedAt string `json:"savedAt,omitempty"`
}

// objectLine describes one object.
type objectLine struct {
	Bucket       string            `json:"bucket"`
	Key          string            `json:"key"`
	ETag         string            `json:"etag"`
	Size         int64             `json:"size"`
	LastModified time.Time         `json:"lastModified"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	Blob         string            `json:"blob"`
}

// endLine counts what the file holds.
type endLine struct {
	Items   int `json:"items"`
	Objects int `json:"objects"`
}

// line is any line after the header.
type line struct {
	Item   json.RawMessage `json:"item,omitempty"`
	Object *objectLine     `json:"object,omitempty"`
	End    *endLine        `json:"end,omitempty"`
}

// Save writes the stores to the file now: a snapshot taken with every write held off, the new
// object bodies, then FILE.tmp, synced and renamed over the file, and the directory synced.
// Bodies no object names any more are removed last. On error the file is left as it was, and
// the next write (or Close) saves again.
func (f *File) Save(ctx context.Context) (err error) {
	f.saveMu.Lock()
	defer f.saveMu.Unlock()
	defer func() {
		if err != nil {
			f.pending.Store(true)
			err = fmt.Errorf("save data file %s: %w", f.path, err)
		}
	}()
	items, objects, bodies, err := f.snapshot(ctx)
	if err != nil {
		return err
	}
	for name, body := range bodies {
		if err := writeBlob(f.objects, name, body); err != nil {
			return err
		}
	}
	if len(bodies) > 0 {
		if err := syncDir(f.objects); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header{Format: Format, Version: version, SavedAt: time.Now().UTC().Format(catalog.TimeLayout)}); err != nil {
		return err
	}
	for _, it := range items {
		b.WriteString(`{"item":`)
		b.Write(it)
		b.WriteString("}\n")
	}
	for i := range objects {
		if err := enc.Encode(line{Object: &objects[i]}); err != nil {
			return err
		}
	}
	if err := enc.Encode(line{End: &endLine{Items: len(items), Objects: len(objects)}}); err != nil {
		return err
	}
	if err := writeAtomic(f.path, b.Bytes()); err != nil {
		return err
	}
	f.exists = true
	keep := map[string]bool{}
	saved := make(map[objectID]string, len(objects))
	for _, o := range objects {
		keep[o.Blob] = true
		saved[objectID{o.Bucket, o.Key, o.ETag}] = o.Blob
	}
	f.blobs = saved
	return removeUnnamed(f.objects, keep)
}

// snapshot reads both stores with writes held off: the table items written since the last
// snapshot (or the whole table) into f.items, and the objects. It returns the table's lines in
// key order, the objects, and the bodies of objects changed since the last save, by blob name.
func (f *File) snapshot(ctx context.Context) ([][]byte, []objectLine, map[string][]byte, error) {
	f.gate.Lock()
	defer f.gate.Unlock()
	f.pending.Store(false)
	f.changedMu.Lock()
	changed, full := f.changed, f.full
	f.changed, f.full = map[dynamo.ItemKey]bool{}, false
	f.changedMu.Unlock()
	if err := f.readTable(ctx, changed, full || f.items == nil); err != nil {
		f.changedMu.Lock()
		f.full = true // read it all next time
		f.changedMu.Unlock()
		return nil, nil, nil, err
	}
	keys := slices.SortedFunc(maps.Keys(f.items), func(a, b dynamo.ItemKey) int {
		return cmp.Or(strings.Compare(a.PK, b.PK), strings.Compare(a.SK, b.SK))
	})
	items := make([][]byte, len(keys))
	for i, k := range keys {
		items[i] = f.items[k]
	}
	if f.store == nil {
		return items, nil, nil, nil
	}
	objs, err := f.store.Objects()
	if err != nil {
		return nil, nil, nil, err
	}
	bodies := map[string][]byte{}
	lines := make([]objectLine, len(objs))
	for i, o := range objs {
		name, known := f.blobs[objectID{o.Bucket, o.Key, o.ETag}]
		if !known {
			body, err := f.store.ObjectBody(o.Bucket, o.Key)
			if err != nil {
				return nil, nil, nil, err
			}
			sum := sha256.Sum256(body)
			name = hex.EncodeToString(sum[:])
			if _, err := os.Stat(filepath.Join(f.objects, name)); err != nil {
				bodies[name] = body
			}
		}
		lines[i] = objectLine{Bucket: o.Bucket, Key: o.Key, ETag: o.ETag, Size: o.Size, LastModified: o.LastModified.UTC(), Metadata: o.Metadata, Blob: name}
	}
	return items, lines, bodies, nil
}

// readTable brings f.items up to date: the whole table when full, else the changed items.
func (f *File) readTable(ctx context.Context, changed map[dynamo.ItemKey]bool, full bool) error {
	if full {
		items, err := f.table.DumpTable(ctx)
		if err != nil {
			return err
		}
		f.items = items
		return nil
	}
	if len(changed) == 0 {
		return nil
	}
	got, err := f.table.DumpItems(ctx, slices.Collect(maps.Keys(changed)))
	if err != nil {
		return err
	}
	for k := range changed {
		if line, ok := got[k]; ok {
			f.items[k] = line
		} else {
			delete(f.items, k)
		}
	}
	return nil
}

// LoadReport is what Load put back.
type LoadReport struct {
	Items, Objects int
}

// Load reads the whole file, checks every line and every object body it names, and only then
// puts the items into the table and the objects into the store. A file that is not a data file,
// a line that cannot be read, a body that is missing or differs from its hash, or a file cut
// short is an error naming the file and the line; nothing is put then.
func (f *File) Load(ctx context.Context) (*LoadReport, error) {
	content, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("load data file: %w", err)
	}
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("data file %s, line %d: %s (the file is left as it is; the server does not start over it)", f.path, n, fmt.Sprintf(format, args...))
	}
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(nil, len(content)+1)
	var items []dynamo.TableItem
	var objects []objectLine
	var end *endLine
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Bytes()
		if n == 1 {
			var h header
			if err := json.Unmarshal(raw, &h); err != nil || h.Format != Format {
				return nil, bad(n, "not a data file of this server (an export is loaded with `import FILE`)")
			}
			if h.Version != version {
				return nil, bad(n, "format version %d, this server reads version %d", h.Version, version)
			}
			continue
		}
		if end != nil {
			return nil, bad(n, "a line after the end line")
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, bad(n, "%v", err)
		}
		switch {
		case l.Item != nil && l.Object == nil && l.End == nil:
			it, err := dynamo.ParseTableItem(l.Item)
			if err != nil {
				return nil, bad(n, "%v", err)
			}
			items = append(items, it)
		case l.Object != nil && l.Item == nil && l.End == nil:
			o := l.Object
			if !blobName.MatchString(o.Blob) || o.Bucket == "" || o.Key == "" {
				return nil, bad(n, "an object without its bucket, key or body name")
			}
			st, err := os.Stat(filepath.Join(f.objects, o.Blob))
			if err != nil || st.Size() != o.Size {
				return nil, bad(n, "the body of s3://%s/%s (%s in %s) is missing or not %d bytes", o.Bucket, o.Key, o.Blob, f.objects, o.Size)
			}
			objects = append(objects, *o)
		case l.End != nil && l.Item == nil && l.Object == nil:
			end = l.End
		default:
			return nil, bad(n, "want one of item, object or end")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load data file %s: %w", f.path, err)
	}
	switch {
	case n == 0:
		return nil, bad(1, "the file is empty")
	case end == nil:
		return nil, bad(n, "no end line: the file was cut short")
	case end.Items != len(items) || end.Objects != len(objects):
		return nil, bad(n, "the end line counts %d items and %d objects, the file holds %d and %d", end.Items, end.Objects, len(items), len(objects))
	}
	if _, err := f.table.RestoreTable(ctx, items, 4); err != nil {
		return nil, fmt.Errorf("load data file %s: %w", f.path, err)
	}
	if len(objects) > 0 && f.store == nil {
		f.log.Warn("the data file holds objects, but the object store is not the embedded one: they are not loaded", "file", f.path, "objects", len(objects))
		objects = nil
	}
	for _, o := range objects {
		body, err := os.ReadFile(filepath.Join(f.objects, o.Blob))
		if err != nil {
			return nil, fmt.Errorf("load data file %s: %w", f.path, err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != o.Blob {
			return nil, fmt.Errorf("load data file %s: the body of s3://%s/%s (%s) differs from its hash: it was changed or damaged", f.path, o.Bucket, o.Key, o.Blob)
		}
		so := blob.SnapshotObject{Bucket: o.Bucket, Key: o.Key, Size: o.Size, LastModified: o.LastModified, Metadata: o.Metadata}
		if err := f.store.RestoreObject(so, body); err != nil {
			return nil, fmt.Errorf("load data file %s: %w", f.path, err)
		}
	}
	// What was put is what the file holds: nothing to save until the next write.
	f.items = make(map[dynamo.ItemKey][]byte, len(items))
	for _, it := range items {
		if f.items[it.Key()], err = it.Line(); err != nil {
			return nil, fmt.Errorf("load data file %s: %w", f.path, err)
		}
	}
	f.changedMu.Lock()
	f.changed, f.full = map[dynamo.ItemKey]bool{}, false
	f.changedMu.Unlock()
	f.pending.Store(false)
	select {
	case <-f.dirty:
	default:
	}
	return &LoadReport{Items: len(items), Objects: len(objects)}, nil
}

// writeAtomic replaces path with data: a temporary file in the same directory, synced, renamed
// over path, and the directory synced, so that a crash leaves the old content or the new.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeBlob writes a body file atomically, unless it exists (same name, same content).
func writeBlob(dir, name string, body []byte) error {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, body); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// removeUnnamed removes the body files of dir that keep does not name, and temporary files a
// crash left.
func removeUnnamed(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if keep[name] || e.IsDir() || !(blobName.MatchString(name) || strings.HasSuffix(name, ".tmp")) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
