package archive

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Command is the name of the archive subcommand: `go run . archive-metrics ...`.
const Command = "archive-metrics"

// DefaultOlderThan is the age the archive command moves metrics past when -before is not
// given: well inside the table's 90-day TTL (dynamo.MetricRetention), so that every hour is
// archived before DynamoDB expires it.
const DefaultOlderThan = 30 * 24 * time.Hour

// RunCommand runs the archive subcommand with args (the arguments after its name):
//
//	archive-metrics [-before 2026-01-01T00:00:00Z | -older-than 720h] [-capability ID] [-quiet]
//
// It archives with a, printing one line per component-hour (unless -quiet) and a summary to
// stdout. -before takes an RFC 3339 time; without it the boundary is now minus -older-than
// (default DefaultOlderThan). -capability limits the run to one capability. Bad flags
// or a boundary that is too recent are a *catalog.ValidationError (flag.ErrHelp for -h); a
// failed run returns its error after printing what it did, and is safe to rerun.
func RunCommand(ctx context.Context, args []string, stdout io.Writer, a *Archiver) error {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stdout)
	before := fs.String("before", "", "archive the component-hours that end at or before this RFC 3339 time")
	olderThan := fs.Duration("older-than", DefaultOlderThan, "without -before: archive what is older than this")
	capability := fs.String("capability", "", "archive only this capability")
	quiet := fs.Bool("quiet", false, "print only the summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return catalog.Invalid("args", "%v", err)
	}
	if fs.NArg() > 0 {
		return catalog.Invalid("args", "unexpected arguments %q", fs.Args())
	}
	boundary := a.obj.Now().Add(-*olderThan)
	if *before != "" {
		t, err := time.Parse(time.RFC3339Nano, *before)
		if err != nil {
			return catalog.Invalid("before", "%q is not an RFC 3339 time such as 2026-01-01T00:00:00Z", *before)
		}
		boundary = t
	}
	_, _ = fmt.Fprintf(stdout, "archiving metrics of component-hours ending at or before %s to s3://%s\n",
		boundary.UTC().Truncate(time.Hour).Format(time.RFC3339), a.obj.MetricsBucket())
	progress := func(p Progress) {
		if *quiet {
			return
		}
		merged := ""
		if p.Merged > 0 {
			merged = fmt.Sprintf(" (merged with %d already archived)", p.Merged)
		}
		_, _ = fmt.Fprintf(stdout, "%s %s %s: %d points%s -> %s, %d items deleted\n",
			p.CapabilityID, p.ComponentID, p.Hour.Format("2006-01-02T15Z"), p.Points, merged, p.URI, p.Deleted)
	}
	var rep Report
	var err error
	if *capability != "" {
		rep, err = a.ArchiveCapability(ctx, *capability, boundary, progress)
	} else {
		rep, err = a.Archive(ctx, boundary, progress)
	}
	_, _ = fmt.Fprintf(stdout, "%d capabilities, %d components scanned; %d objects written (%d merged), %d points archived, %d items deleted (%d kept: rewritten meanwhile), %d bytes\n",
		rep.Capabilities, rep.Components, rep.ObjectsWritten, rep.ObjectsMerged, rep.PointsArchived, rep.ItemsDeleted, rep.ItemsKept, rep.BytesWritten)
	if err != nil {
		_, _ = fmt.Fprintf(stdout, "stopped: %v (rerun to resume: nothing is lost or archived twice)\n", err)
		return err
	}
	return nil
}
