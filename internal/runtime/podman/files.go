package podman

import "context"

// ContainerFiles returns where the container keeps its log (k8s-file
// driver) and its writable layer (overlay), for measuring their disk use.
func (b *Backend) ContainerFiles(ctx context.Context, id string) (logPath, rootfsDir string, err error) {
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		return "", "", wrapf(err, "inspect container %s", shortID(id))
	}
	if ic.HostConfig.LogConfig.Type == "k8s-file" {
		logPath = ic.HostConfig.LogConfig.Path
	}
	return logPath, ic.GraphDriver.Data.UpperDir, nil
}
