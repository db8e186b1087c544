package cluster

import "os"

// hostName is the default instance name: the host's name, or "switchboard"
// when it cannot be read.
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "switchboard"
}
