package main

import (
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
	"github.com/prometheus/client_golang/prometheus"
)

// replicaProbe is what /readyz says of a replica.
type replicaProbe struct {
	Name       string  `json:"name"`
	Serving    bool    `json:"serving"`
	LagSeconds float64 `json:"lag_seconds"`
	Reason     string  `json:"reason,omitempty"` // why it does not serve
}

// replicaReports returns what /metrics and /readyz report of store's
// replicas: the collector of its reads and the function that /readyz asks
// for their state; nil when store has no replicas.
func replicaReports(store petstore.Store) ([]prometheus.Collector, func() []replicaProbe) {
	s, ok := store.(*pgstore.Store)
	if !ok || len(s.ReadStats().Replicas) == 0 {
		return nil, nil
	}
	return []prometheus.Collector{readsCollector{s}}, func() []replicaProbe {
		var probes []replicaProbe
		for _, r := range s.ReadStats().Replicas {
			p := replicaProbe{Name: r.Name, Serving: r.Serving, LagSeconds: r.Lag.Seconds()}
			switch {
			case r.Err != nil:
				p.Reason = r.Err.Error()
			case !r.Serving:
				p.Reason = "it lags too far behind the primary, or a read on it failed since its last check"
			}
			probes = append(probes, p)
		}
		return probes
	}
}

// readsCollector exports a pgstore.Store's ReadStats to Prometheus.
type readsCollector struct{ store *pgstore.Store }

var (
	readsDesc = prometheus.NewDesc("petstore_store_reads_total",
		"Reads of pets (Get and List) by where they were served: replica, primary (no replica could serve), "+
			"or fallback (tried on a replica, served by the primary).", []string{"served_by"}, nil)
	waitsDesc = prometheus.NewDesc("petstore_replica_waits_total",
		"Reads that waited for a replica to replay this instance's last created pet.", nil, nil)
	waitDesc = prometheus.NewDesc("petstore_replica_wait_seconds_total",
		"Time that reads waited for a replica to replay this instance's last created pet.", nil, nil)
	lagDesc = prometheus.NewDesc("petstore_replica_lag_seconds",
		"How far the replica lags behind the primary: it has replayed every commit older than this, as of its last check.",
		[]string{"replica"}, nil)
	servingDesc = prometheus.NewDesc("petstore_replica_serving",
		"1 when reads go to the replica, 0 when it is skipped (unreachable, promoted, or lagging past the bound).",
		[]string{"replica"}, nil)
)

// Describe implements prometheus.Collector.
func (c readsCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

// Collect implements prometheus.Collector.
func (c readsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.store.ReadStats()
	for servedBy, n := range map[string]int64{"replica": st.Replica, "primary": st.Primary, "fallback": st.Fallback} {
		ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(n), servedBy)
	}
	ch <- prometheus.MustNewConstMetric(waitsDesc, prometheus.CounterValue, float64(st.Waits))
	ch <- prometheus.MustNewConstMetric(waitDesc, prometheus.CounterValue, st.WaitTime.Seconds())
	for _, r := range st.Replicas {
		serving := 0.0
		if r.Serving {
			serving = 1
		}
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, r.Lag.Seconds(), r.Name)
		ch <- prometheus.MustNewConstMetric(servingDesc, prometheus.GaugeValue, serving, r.Name)
	}
}
