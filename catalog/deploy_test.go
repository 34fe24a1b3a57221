package catalog

import "testing"

func TestAddDeploymentTime(t *testing.T) {
	for _, tt := range []struct {
		avg   string
		count int
		secs  int
		want  string
		wantN int
	}{
		{"", 0, 900, "15.0m", 1},
		{"12.5m", 0, 900, "13.8m", 2}, // an imported average counts as one deployment
		{"10.0m", 3, 1200, "12.5m", 4},
		{"bogus", 5, 60, "1.0m", 1},
	} {
		a := &Aggregates{AverageDeploymentTime: tt.avg, CompletedDeployments: tt.count}
		AddDeploymentTime(a, tt.secs)
		if a.AverageDeploymentTime != tt.want || a.CompletedDeployments != tt.wantN {
			t.Errorf("AddDeploymentTime(%q, %d, %ds) = %q, %d; want %q, %d", tt.avg, tt.count, tt.secs, a.AverageDeploymentTime, a.CompletedDeployments, tt.want, tt.wantN)
		}
	}
}

func TestBreaches(t *testing.T) {
	th := &AlertThreshold{ErrorRate: 5, Latency: 500}
	sample := func(rate, p95 float64) *Metric {
		return &Metric{MetricType: MetricPerformance, Values: &MetricValues{Errors: &ErrorsValue{Rate: rate}, Latency: &LatencyValue{P95: p95}}}
	}
	for _, tt := range []struct {
		m    *Metric
		want bool
	}{
		{sample(5, 500), false}, // at the threshold: no breach
		{sample(5.1, 100), true},
		{sample(1, 501), true},
		{&Metric{MetricType: MetricBusiness, Values: &MetricValues{Errors: &ErrorsValue{Rate: 50}}}, false},
		{&Metric{MetricType: MetricPerformance}, false},
	} {
		if why, got := Breaches(tt.m, th); got != tt.want {
			t.Errorf("Breaches(%+v) = %v (%s), want %v", tt.m.Values, got, why, tt.want)
		}
	}
	if _, got := Breaches(sample(50, 5000), nil); got {
		t.Error("no threshold breached")
	}
}

func TestFinishGatedJob(t *testing.T) {
	targets := []TargetComponent{{ComponentID: "a", FromVersion: "1", ToVersion: "2"}, {ComponentID: "b", FromVersion: "1"}}
	for _, tt := range []struct {
		jobType   JobType
		status    JobStatus
		automatic bool
		moves     []VersionMove
		target    string
		metrics   JobMetrics
	}{
		{JobDeployment, JobCompleted, false, []VersionMove{{"a", "2", "", false}}, TargetCompleted, JobMetrics{DeploymentsCompleted: 2, TotalArtifactsDeployed: 1}},
		{JobRollback, JobCompleted, false, []VersionMove{{"a", "1", "", false}, {"b", "1", "", false}}, TargetCompleted, JobMetrics{DeploymentsCompleted: 2, TotalArtifactsDeployed: 2}},
		{JobDeployment, JobRolledBack, true, []VersionMove{{"a", "1", "2", true}}, TargetRolledBack, JobMetrics{RollbacksTriggered: 1}},
		{JobDeployment, JobFailed, false, nil, TargetFailed, JobMetrics{}},
		{JobScaling, JobCompleted, false, nil, "", JobMetrics{}},
	} {
		j := &Job{JobType: tt.jobType, Status: tt.status, TargetComponents: append([]TargetComponent{}, targets...)}
		moves := FinishGatedJob(j, tt.automatic)
		if len(moves) != len(tt.moves) {
			t.Errorf("%s %s: moves %v, want %v", tt.jobType, tt.status, moves, tt.moves)
			continue
		}
		for i := range moves {
			if moves[i] != tt.moves[i] {
				t.Errorf("%s %s: moves %v, want %v", tt.jobType, tt.status, moves, tt.moves)
			}
		}
		if j.TargetComponents[0].Status != tt.target || (j.Metrics != nil && *j.Metrics != tt.metrics) {
			t.Errorf("%s %s: target %q metrics %+v", tt.jobType, tt.status, j.TargetComponents[0].Status, j.Metrics)
		}
		if targets[0].Status != "" {
			t.Fatal("FinishGatedJob changed the old job's targets in place")
		}
	}
}
