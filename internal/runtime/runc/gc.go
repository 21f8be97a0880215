package runc

import (
	"context"
	"time"
)

// gcPeriod is how often image GC runs: the kubelet's ImageGCPeriod.
const gcPeriod = 5 * time.Minute

// gcLoop collects unused images by the disk thresholds until Close.
func (b *Backend) gcLoop(high, low int) {
	t := time.NewTicker(gcPeriod)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			if err := b.GCImages(b.ctx, high, low); err != nil {
				b.logf("runc backend: %v", err)
			}
		}
	}
}

// GCImages removes images no container of any owner uses, as the kubelet's
// image GC does, when the image filesystem is above high percent used.
func (b *Backend) GCImages(ctx context.Context, high, low int) error {
	used := map[string]bool{}
	for _, id := range b.ids("c", containerFile) {
		rec, err := b.readContainer(id)
		if err != nil {
			continue
		}
		used[rec.ImageID] = true
		for _, m := range rec.Config.Mounts {
			if m.Image != "" {
				if im, err := b.images.Image(m.Image); err == nil {
					used[im.ID] = true
				}
			}
		}
	}
	return b.images.GC(ctx, func(id string) bool { return used[id] }, high, low)
}
