package pipeline_test

import (
	"context"
	"fmt"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/pipeline"
)

// printQueue is an EventQueue that prints what it is asked to queue.
type printQueue struct{}

func (printQueue) Enqueue(_ context.Context, guideID string) (pipeline.Enqueued, error) {
	fmt.Println("ready event queued for", guideID)
	return pipeline.Enqueued{Queued: 1}, nil
}

// A watcher runs each export through the pipeline: the ready event of a
// changed, ready guide is queued; an unchanged export queues nothing.
func Example() {
	p := pipeline.New(pipeline.Config{Events: printQueue{}})
	ctx := context.Background()
	export := func(changed bool) func() (*exporter.GuideResult, error) {
		return func() (*exporter.GuideResult, error) {
			return &exporter.GuideResult{Folder: "301-king-st-e", GuideID: "gKT301KINGE1", Ready: true, Changed: changed}, nil
		}
	}
	p.ExportGuide(ctx, export(true))
	p.ExportGuide(ctx, export(false))
	fmt.Println(p.Queued(), "delivery queued")
	// Output:
	// ready event queued for gKT301KINGE1
	// 1 delivery queued
}
