package conformance

// Rows returns the matrix's rows: every built-in algorithm with its
// defaults, the variants whose corrections differ (the papers' and the
// official codes'), and every built-in sampler (which runs with FedAvg).
func Rows() []Row {
	alg := func(name, method, block string) Row {
		return Row{Name: name, Kind: KindAlgorithm, Method: method, Block: block}
	}
	smp := func(name, block string) Row {
		return Row{Name: name, Kind: KindSampler, Method: name, Block: block}
	}
	fnrfl := alg("fnrfl", "fnrfl", "fnrfl")
	fnrfl.Public = true
	return []Row{
		alg("fedavg", "fedavg", "fedavg"),
		alg("fedprox (μ 0.01)", "fedprox", "{name: fedprox, mu: 0.01}"),
		alg("scaffold", "scaffold", "scaffold"),
		alg("scaffold (after_step)", "scaffold", "{name: scaffold, correction: after_step}"),
		alg("feddyn (α 0.01)", "feddyn", "{name: feddyn, alpha: 0.01}"),
		alg("moon (μ 1)", "moon", "{name: moon, mu: 1}"),
		alg("fednova", "fednova", "fednova"),
		alg("feddc", "feddc", "feddc"),
		alg("feddc (drift_mean all)", "feddc", "{name: feddc, drift_mean: all}"),
		alg("feddc (control_variate)", "feddc", "{name: feddc, correction: control_variate}"),
		alg("feddc (official code)", "feddc", "{name: feddc, drift_mean: all, correction: control_variate, size_scaled: true}"),
		alg("fedeba", "fedeba", "fedeba"),
		alg("fedeba+", "fedeba+", "fedeba+"),
		alg("prac-fedeba+", "prac-fedeba+", "prac-fedeba+"),
		alg("qffl", "qffl", "qffl"),
		alg("term", "term", "term"),
		alg("afl", "afl", "afl"),
		alg("fedmgda+", "fedmgda+", "fedmgda+"),
		alg("propfair", "propfair", "propfair"),
		alg("fedfv", "fedfv", "fedfv"),
		fnrfl,
		smp("uniform", "uniform"),
		smp("md", "md"),
		smp("binomial", "binomial"),
		smp("poisson", "poisson"),
		smp("clustered", "clustered"),
		smp("random", "random"),
		smp("pow-d", "{name: pow-d, d: 10}"),
		smp("divfl", "divfl"),
		smp("fedcor", "fedcor"),
		smp("hics", "hics"),
		smp("clustered-similarity", "clustered-similarity"),
	}
}
