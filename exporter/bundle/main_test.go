package bundle_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain bounds the time the fuzzer spends minimizing each new input to
// 5s unless -test.fuzzminimizetime is given. The seeds are whole guide.json
// files of several KB; Go's minimizer is quadratic in the input size, so at
// its default of 60s a single minimization would use all of "make fuzz".
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		if err := flag.Set("test.fuzzminimizetime", "5s"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
