package partition_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/flsweep/flsweep/partition"
)

// ExampleShards builds FedEBA+'s Fashion-MNIST clients: 200 label-sorted
// shards of 300 samples, 2 per client, then an 80/20 local split.
func ExampleShards() {
	labels := make([]uint8, 60000) // Fashion-MNIST train labels: 6,000 per class
	for i := range labels {
		labels[i] = uint8(i % 10)
	}
	r := rand.New(rand.NewPCG(1, 1))
	train, err := partition.Shards(labels, 100, 2, r)
	if err != nil {
		log.Fatal(err)
	}
	keep, test, err := partition.HoldOut(train, labels, 0.2, r)
	if err != nil {
		log.Fatal(err)
	}
	p := partition.Partition{Train: keep, Test: test, TestFrom: partition.SourceTrain}
	stats := partition.Stats(p, labels, nil, 10)
	fmt.Println(len(stats), "clients;", stats[0].Train, "train and", stats[0].Test, "test samples each")
	// Output: 100 clients; 480 train and 120 test samples each
}

// ExampleIID splits 1,001 samples among 10 clients the NIID-Bench "homo"
// way: np.array_split sizes, the first 1001 % 10 = 1 client one larger.
func ExampleIID() {
	parts, err := partition.IID(1001, 10, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		log.Fatal(err)
	}
	var sizes []int
	for _, p := range parts {
		sizes = append(sizes, len(p))
	}
	fmt.Println(sizes)
	// Output: [101 100 100 100 100 100 100 100 100 100]
}
