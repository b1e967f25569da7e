//go:build !linux

package main

// peakRSSMB is 0 off Linux: ru_maxrss has other units there.
func peakRSSMB() float64 { return 0 }
