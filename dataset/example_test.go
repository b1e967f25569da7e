package dataset_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/flsweep/flsweep/dataset"
)

func ExampleSynthetic() {
	d := dataset.Synthetic(dataset.SyntheticOptions{Classes: 3, NTrain: 30, NTest: 9, Seed: 1})
	fmt.Println(d.Name, d.Classes, d.Shape, d.Dim(), d.Train.N, d.Test.N, len(d.Train.X))
	// Output: synthetic 3 [1 8 8] 64 30 9 1920
}

func ExampleCache() {
	// One Cache per process; activities share it, so each dataset is loaded once.
	c := dataset.NewCache()
	ctx := context.Background()
	a, err := c.Get(ctx, "synthetic", "")
	if err != nil {
		log.Fatal(err)
	}
	b, err := c.Get(ctx, "synthetic", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a == b, a.Train.N, a.Test.N)
	// Output: true 2000 500
}

func ExampleLoad_missing() {
	_, err := dataset.Load(context.Background(), "fmnist", "/nonexistent/fmnist")
	fmt.Println(errors.Is(err, dataset.ErrNotFound))
	fmt.Println(err)
	// Output:
	// true
	// dataset fmnist: /nonexistent/fmnist/train-images-idx3-ubyte: not found (nor train-images-idx3-ubyte.gz); run "starter data fetch fmnist --dir /nonexistent/fmnist"
}

func ExampleReadIDXImages() {
	var b bytes.Buffer
	if err := dataset.WriteIDXImages(&b, 2, 2, 3, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}); err != nil {
		log.Fatal(err)
	}
	n, rows, cols, pix, err := dataset.ReadIDXImages(&b, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, rows, cols, pix[6:])
	// Output: 2 2 3 [6 7 8 9 10 11]
}
