package promobs_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// families gathers reg and indexes the result by family name.
func families(t *testing.T, reg prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	got, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	byName := make(map[string]*dto.MetricFamily, len(got))
	for _, f := range got {
		byName[f.GetName()] = f
	}
	return byName
}

// sample returns the metric of family name whose labels include every pair
// of labels, failing the test when there is none.
func sample(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f, ok := families(t, reg)[name]
	if !ok {
		t.Fatalf("family %s not gathered", name)
	}
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			return m
		}
	}
	t.Fatalf("family %s has no series with labels %v", name, labels)
	return nil
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	matched := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			matched++
		}
	}
	return matched == len(want)
}

// value returns a counter's or gauge's value.
func value(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	m := sample(t, reg, name, labels)
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s%v is neither a counter nor a gauge", name, labels)
	return 0
}

// seriesCount returns how many series family name has.
func seriesCount(t *testing.T, reg prometheus.Gatherer, name string) int {
	t.Helper()
	return len(families(t, reg)[name].GetMetric())
}
