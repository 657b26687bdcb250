package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

const (
	dashboardFile = "grafana/reliar-relay.json"
	rulesFile     = "prometheus/reliar-relay.rules.yaml"
)

// promQL is one PromQL expression and where it comes from.
type promQL struct{ where, expr string }

// grafanaVariables are the values the variables of the dashboard are
// replaced with before parsing, as Grafana would: a regular expression for
// the multi-value ones, a range for the interval.
var grafanaVariables = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$__interval", "1m",
	"$__range", "6h",
	"${datasource}", "prometheus",
	"$datasource", "prometheus",
	"$job", ".*",
	"$instance", ".*",
	"$tenant", ".*",
)

// leftover finds a variable the replacer does not know.
var leftover = regexp.MustCompile(`\$\{?[A-Za-z_]+`)

// labelValues is a Grafana variable query: label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([A-Za-z_][A-Za-z0-9_]*)\)$`)

// dashboardExprs returns every expression of the dashboard: each panel's
// targets (rows included) and the selectors of the variable queries.
func dashboardExprs(t *testing.T) []promQL {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
			Panels []json.RawMessage `json:"panels"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []promQL
	for _, p := range d.Panels {
		if len(p.Panels) > 0 {
			t.Fatalf("%s: row %q holds collapsed panels, which this test does not read", dashboardFile, p.Title)
		}
		for i, tg := range p.Targets {
			out = append(out, promQL{fmt.Sprintf("panel %q target %d", p.Title, i), tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, ok := v.Query.(map[string]any)
		if !ok {
			t.Fatalf("variable %s: query is %T, want an object", v.Name, v.Query)
		}
		m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
		if m == nil {
			t.Fatalf("variable %s: query %q is not label_values(selector, label)", v.Name, q["query"])
		}
		out = append(out, promQL{"variable " + v.Name, m[1]})
	}
	return out
}

// ruleExprs returns every rule's expression, after the rules file passed
// Prometheus' own validation (which parses them too).
func ruleExprs(t *testing.T) ([]promQL, *rulefmt.RuleGroups) {
	t.Helper()
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errs)
	}
	var out []promQL
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, promQL{fmt.Sprintf("rule %s%s", r.Alert, r.Record), r.Expr})
		}
	}
	return out, groups
}

// metricNames parses expr and returns the metric name of each of its
// selectors; a selector without an exact name is an error, since it could
// not be checked.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	var bad error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			bad = fmt.Errorf("selector %s names no metric exactly", vs)
		}
		names = append(names, name)
		return nil
	})
	return names, bad
}

// TestPromQLNamesExportedMetrics: every expression of the dashboard and the
// rules parses, and every metric it names is one the relay exports (up
// aside), so that a renamed metric fails here rather than on a blank panel
// or a silent alert.
func TestPromQLNamesExportedMetrics(t *testing.T) {
	exported := exportedNames(t)
	rules, _ := ruleExprs(t)
	all := append(dashboardExprs(t), rules...)
	if len(all) < 30 {
		t.Fatalf("only %d expressions found in the dashboard and the rules", len(all))
	}
	used := map[string]bool{}
	for _, q := range all {
		expr := grafanaVariables.Replace(q.expr)
		if v := leftover.FindString(expr); v != "" {
			t.Errorf("%s: variable %s is not substituted: %s", q.where, v, q.expr)
			continue
		}
		names, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v\n\t%s", q.where, err, expr)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: names no metric: %s", q.where, expr)
		}
		for _, n := range names {
			used[n] = true
			if n != "up" && !exported[n] {
				t.Errorf("%s: metric %s is not exported by the relay", q.where, n)
			}
		}
	}
	t.Logf("%d expressions, %d metrics: %v", len(all), len(used), slices.Sorted(func(yield func(string) bool) {
		for n := range used {
			if !yield(n) {
				return
			}
		}
	}))
}

// TestMetricNamesRejectsUnknown guards the check above: a misspelt metric
// and a selector without a name are both caught.
func TestMetricNamesRejectsUnknown(t *testing.T) {
	exported := exportedNames(t)
	names, err := metricNames(`max(reliar_outbox_oldest_due_age_second{job="x"})`)
	if err != nil || len(names) != 1 || exported[names[0]] {
		t.Fatalf("metricNames of a misspelt metric = %v, %v; want one name the relay does not export", names, err)
	}
	if _, err := metricNames(`{__name__=~"reliar_.+"}`); err == nil {
		t.Fatal("metricNames accepted a selector without an exact name")
	}
	if _, err := metricNames(`max(reliar_outbox_due`); err == nil {
		t.Fatal("metricNames accepted an expression that does not parse")
	}
}

// TestTableWideGaugesUseMax: the gauges every relay exports for the same
// table are combined with max in every expression, never summed (a sum
// would count the backlog once per relay).
func TestTableWideGaugesUseMax(t *testing.T) {
	tableWide := []string{"reliar_outbox_pending", "reliar_outbox_due", "reliar_outbox_leased", "reliar_outbox_scheduled",
		"reliar_outbox_dead", "reliar_outbox_expired_pending", "reliar_outbox_oldest_due_age_seconds",
		"reliar_outbox_tenant_due", "reliar_outbox_tenant_oldest_due_age_seconds"}
	rules, _ := ruleExprs(t)
	for _, q := range append(dashboardExprs(t), rules...) {
		if strings.HasPrefix(q.where, "variable ") {
			continue
		}
		e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVariables.Replace(q.expr))
		if err != nil {
			t.Fatalf("%s: %v", q.where, err)
		}
		parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || !slices.Contains(tableWide, vs.Name) {
				return nil
			}
			var agg *parser.AggregateExpr
			for i := len(path) - 1; i >= 0 && agg == nil; i-- {
				agg, _ = path[i].(*parser.AggregateExpr)
			}
			if agg == nil || agg.Op != parser.MAX {
				t.Errorf("%s: table-wide gauge %s is not under max: %s", q.where, vs.Name, q.expr)
			}
			return nil
		})
	}
}

// TestRulesHaveRunbooks: every alert says what it is and what to do, and
// the alerts the relay's operators need are all there.
func TestRulesHaveRunbooks(t *testing.T) {
	_, groups := ruleExprs(t)
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			for _, a := range []string{"summary", "description", "runbook"} {
				if len(strings.TrimSpace(r.Annotations[a])) < 20 {
					t.Errorf("alert %s: annotation %s is missing or too short", r.Alert, a)
				}
			}
			if r.Labels["severity"] == "" {
				t.Errorf("alert %s: no severity label", r.Alert)
			}
		}
	}
	for _, want := range []string{"ReliarBacklogOldestDueAge", "ReliarDeadLettersGrowing", "ReliarBreakerOpen", "ReliarRelayDown"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s among %v", want, alerts)
		}
	}
}
