package report

import (
	"slices"
)

// Summary is the medians and ranges of one system's successful runs in one
// scenario.
type Summary struct {
	Scenario string
	System   string
	// Runs is the number of successful runs; Failed the number of failed
	// ones.
	Runs, Failed int
	// PerSecond is the median throughput, Low and High the extremes.
	PerSecond, Low, High float64
	// P50Ms and P99Ms are the medians of the runs' latency percentiles.
	P50Ms, P99Ms float64
	// EnqueueTxP50Ms and EnqueueTxP99Ms are the medians of the runs'
	// producer transaction percentiles taken while dispatching.
	EnqueueTxP50Ms, EnqueueTxP99Ms float64
	// CPUNsPerMsg is the median CPU time per message of this process.
	CPUNsPerMsg float64
	// Duplicates is the sum over the runs.
	Duplicates int64
}

// Summarize groups results by scenario and system, in the order in which
// each pair first appears.
func Summarize(results []Result) []Summary {
	var out []Summary
	index := map[[2]string]int{}
	groups := map[[2]string][]Result{}
	for _, r := range results {
		k := [2]string{r.Scenario, r.System}
		if _, ok := index[k]; !ok {
			index[k] = len(out)
			out = append(out, Summary{Scenario: r.Scenario, System: r.System})
		}
		groups[k] = append(groups[k], r)
	}
	for k, rs := range groups {
		s := &out[index[k]]
		var rates, p50, p99, cpu, txP50, txP99 []float64
		for _, r := range rs {
			if !r.OK() {
				s.Failed++
				continue
			}
			s.Runs++
			s.Duplicates += r.Duplicates
			rates = append(rates, r.PerSecond)
			p50 = append(p50, r.P50Ms)
			p99 = append(p99, r.P99Ms)
			cpu = append(cpu, r.CPUNsPerMsg)
			txP50 = append(txP50, r.EnqueueTxP50Ms)
			txP99 = append(txP99, r.EnqueueTxP99Ms)
		}
		if s.Runs == 0 {
			continue
		}
		s.PerSecond, s.P50Ms, s.P99Ms, s.CPUNsPerMsg = Median(rates), Median(p50), Median(p99), Median(cpu)
		s.EnqueueTxP50Ms, s.EnqueueTxP99Ms = Median(txP50), Median(txP99)
		s.Low, s.High = slices.Min(rates), slices.Max(rates)
	}
	return out
}

// Find returns the summary of system in scenario.
func Find(sums []Summary, scenario, system string) (Summary, bool) {
	for _, s := range sums {
		if s.Scenario == scenario && s.System == system {
			return s, s.Runs > 0
		}
	}
	return Summary{}, false
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
