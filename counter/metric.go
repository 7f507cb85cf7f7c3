package counter

// The metric the build counts: kprof build compiles this package with a
// file that sets these before any package that imports it initialises
// (toolexec, for -metric cost), and sets what the runtime charges for
// append's growth (setGrowth; cost.Table.Growth). Left as they are, the
// metric is go/ssa instructions.
var (
	metricName  string
	metricTable string
	metricScale int64 = 1
)

// Metric returns what a count measures in this build: name "" for
// instructions, "cost" for the cost metric, with table identifying its
// table of weights (profile.Meta.Metric and MetricTable), and scale, how
// many units of the metric an average instruction counts (1 for
// instructions; for cost, the picoseconds of the table's scale). An
// agent multiplies its default granularity by scale, so that a program
// samples about as often under either metric.
func Metric() (name, table string, scale int64) {
	return metricName, metricTable, metricScale
}
