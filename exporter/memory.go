package exporter

// ExportOverhead is the memory an export takes besides its decodes'
// budget: compressing documents and copying media at the default --jobs,
// about 150 MiB (docs/robustness.md#decoding-budget, BenchmarkMediaCopy).
const ExportOverhead = 150 << 20

// MemoryBudget returns the memory, in bytes, that a process exporting with
// c takes at most, what a container running export or watch must be
// given: the decodes' budget (Limits.DecodeMemory, --max-decode-memory)
// plus ExportOverhead. cmd/guidepub sets the Go memory limit from it
// (site/memlimit).
func (c Config) MemoryBudget() int64 {
	return int64(c.Limits.WithDefaults().DecodeMemory)<<20 + ExportOverhead
}
