package blob

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// Snapshots of the embedded object store, for the embedded default's data file: every object of
// every bucket with its metadata and modification time, so that a restart finds the job
// artifacts and archived metrics it had.

// SnapshotObject is one object of the embedded store.
type SnapshotObject struct {
	Bucket, Key string
	// ETag is the object's entity tag (its MD5, quoted), which changes with its content.
	ETag         string
	Size         int64
	LastModified time.Time
	// Metadata is what the object's headers say (Content-Type, user metadata).
	Metadata map[string]string
}

// Objects returns every object of every bucket of the store, sorted by bucket then key. It
// reads the store in memory, not through its HTTP API.
func (e *Embedded) Objects() ([]SnapshotObject, error) {
	buckets, err := e.Backend.ListBuckets()
	if err != nil {
		return nil, fmt.Errorf("list buckets: %w", err)
	}
	slices.SortFunc(buckets, func(a, b gofakes3.BucketInfo) int { return cmp.Compare(a.Name, b.Name) })
	var out []SnapshotObject
	for _, b := range buckets {
		list, err := e.Backend.ListBucket(b.Name, nil, gofakes3.ListBucketPage{})
		if err != nil {
			return nil, fmt.Errorf("list bucket %s: %w", b.Name, err)
		}
		for _, c := range list.Contents {
			head, err := e.Backend.HeadObject(b.Name, c.Key)
			if err != nil {
				return nil, fmt.Errorf("head s3://%s/%s: %w", b.Name, c.Key, err)
			}
			if head.Contents != nil {
				_ = head.Contents.Close()
			}
			out = append(out, SnapshotObject{Bucket: b.Name, Key: c.Key, ETag: c.ETag, Size: c.Size,
				LastModified: c.LastModified.Time, Metadata: maps.Clone(head.Metadata)})
		}
	}
	return out, nil
}

// ObjectBody returns the content of an object of the store.
func (e *Embedded) ObjectBody(bucket, key string) ([]byte, error) {
	obj, err := e.Backend.GetObject(bucket, key, nil)
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: %w", bucket, key, err)
	}
	defer obj.Contents.Close()
	body, err := io.ReadAll(obj.Contents)
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: %w", bucket, key, err)
	}
	return body, nil
}

// RestoreObject puts an object into the store as a snapshot holds it, modification time
// included, creating its bucket if need be. It is for loading a snapshot before the store
// serves: a put that the server takes meanwhile could be stamped with o's time.
func (e *Embedded) RestoreObject(o SnapshotObject, body []byte) error {
	e.gen.Add(1)
	defer e.gen.Add(1)
	exists, err := e.Backend.BucketExists(o.Bucket)
	if err != nil {
		return fmt.Errorf("restore s3://%s/%s: %w", o.Bucket, o.Key, err)
	}
	if !exists {
		if err := e.Backend.CreateBucket(o.Bucket); err != nil {
			return fmt.Errorf("restore s3://%s/%s: %w", o.Bucket, o.Key, err)
		}
	}
	e.clock.pin(o.LastModified)
	defer e.clock.unpin()
	meta := maps.Clone(o.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	if _, err := e.Backend.PutObject(o.Bucket, o.Key, meta, bytes.NewReader(body), int64(len(body)), nil); err != nil {
		return fmt.Errorf("restore s3://%s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// clock is the embedded store's time source: the wall clock, or while a snapshot is restored,
// the time the object being put was last modified.
type clock struct {
	mu     sync.Mutex
	pinned time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pinned.IsZero() {
		return c.pinned
	}
	return time.Now()
}

func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *clock) pin(t time.Time) {
	c.mu.Lock()
	c.pinned = t
	c.mu.Unlock()
}

func (c *clock) unpin() { c.pin(time.Time{}) }
