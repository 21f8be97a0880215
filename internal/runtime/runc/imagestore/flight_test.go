package imagestore

import (
	"context"
	"errors"
	"testing"
)

func TestFlightAWaiterThatLeavesFailsNoOther(t *testing.T) {
	var f flight[int]
	started, release, joined := make(chan struct{}), make(chan struct{}), make(chan struct{})
	f.joined = func(string) { close(joined) }
	runs := 0
	var callErr error
	fn := func(ctx context.Context) (int, error) {
		runs++
		close(started)
		<-release
		callErr = ctx.Err()
		return 7, nil
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := f.do(ctx1, "k", fn); first <- err }()
	<-started
	type result struct {
		v   int
		err error
	}
	second := make(chan result, 1)
	go func() { v, err := f.do(context.Background(), "k", fn); second <- result{v, err} }()
	<-joined
	cancel1()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that left got %v; want context.Canceled", err)
	}
	close(release)
	if r := <-second; r.v != 7 || r.err != nil {
		t.Errorf("the caller that stayed got %d, %v; want 7", r.v, r.err)
	}
	if runs != 1 || callErr != nil {
		t.Errorf("the call ran %d times, its context %v; want once, never cancelled", runs, callErr)
	}
}

func TestFlightIsCancelledOnceNobodyWaits(t *testing.T) {
	var f flight[int]
	started, cancelled := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.do(ctx, "k", func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return 0, ctx.Err()
		})
		done <- err
	}()
	<-started
	cancel()
	<-cancelled
	<-done
	v, err := f.do(context.Background(), "k", func(context.Context) (int, error) { return 1, nil })
	if v != 1 || err != nil {
		t.Errorf("a call after the cancelled one = %d, %v; want a fresh call's 1", v, err)
	}
}
