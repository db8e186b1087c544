package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// devicesTimeout bounds one devices command.
const devicesTimeout = 15 * time.Second

func devicesListCommand() *command {
	return &command{
		name:    "devices list",
		summary: "list paired devices and pending pairing requests",
		help: `Lists the devices waiting for approval (with the requestId to approve) and the
paired ones. It asks the running daemon over the gateway; when no daemon runs,
it reads the state store directly.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard devices list: takes no arguments\n")
				return exitUsage
			}
			return c.devices(ctx, g, func(ctx context.Context, d deviceOps) error {
				pending, paired, err := d.list(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "Pending pairing requests: %d\n", len(pending))
				for _, p := range pending {
					fmt.Fprintf(c.stdout, "  %s  device %s  %s/%s  role %s  scopes %s  from %s\n", p.RequestID, short(p.Device.ID),
						p.Device.ClientID, p.Device.Platform, p.Device.Role, strings.Join(p.Device.Scopes, ","), p.IP)
				}
				fmt.Fprintf(c.stdout, "Paired devices: %d\n", len(paired))
				for _, d := range paired {
					fmt.Fprintf(c.stdout, "  %s  %s/%s  role %s  scopes %s\n", short(d.ID), d.ClientID, d.Platform, d.Role, strings.Join(d.Scopes, ","))
				}
				return nil
			})
		},
	}
}

func devicesDecideCommand(approve bool) *command {
	verb, done, method := "approve", "Approved", "device.pair.approve"
	summary := "approve a device's pairing request"
	if !approve {
		verb, done, method, summary = "reject", "Rejected", "device.pair.reject", "reject a device's pairing request"
	}
	return &command{
		name:    "devices " + verb,
		args:    "<requestId>",
		summary: summary,
		help: `Decides a pending pairing request; the requestId is in the device's
"pairing required" error, in the log, and in "switchboard devices list". An
approved device gets the role and scopes it asked for. It asks the running
daemon over the gateway (which tells connected operators); when no daemon
runs, it changes the state store directly.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) != 1 || args[0] == "" {
				fmt.Fprintf(c.stderr, "switchboard devices %s: takes one argument, the requestId\n", verb)
				return exitUsage
			}
			id := args[0]
			return c.devices(ctx, g, func(ctx context.Context, d deviceOps) error {
				if err := d.decide(ctx, method, id); err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s pairing request %s\n", done, id)
				return nil
			})
		},
	}
}

// deviceOps is how a devices command reaches the device store: through the
// daemon's gateway, or directly when no daemon runs.
type deviceOps interface {
	list(ctx context.Context) ([]store.PairingRequest, []store.Device, error)
	decide(ctx context.Context, method, requestID string) error
}

func (c *cli) devices(ctx context.Context, g *globalFlags, fn func(context.Context, deviceOps) error) int {
	cfg, _, stateDir, code := c.loadConfigAndState(g.config, config.ForManagement)
	if cfg == nil {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, devicesTimeout)
	defer cancel()
	ops, closeOps, err := connectDevices(ctx, cfg, stateDir)
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard devices: %v\n", err)
		return exitFailure
	}
	defer closeOps()
	if err := fn(ctx, ops); err != nil {
		fmt.Fprintf(c.stderr, "switchboard devices: %s\n", cliError(err))
		return exitFailure
	}
	return exitOK
}

// connectDevices dials the local gateway; if nothing listens there, it
// opens the store itself.
func connectDevices(ctx context.Context, cfg *config.Config, stateDir string) (deviceOps, func(), error) {
	cl, st, err := reachDaemon(ctx, cfg, stateDir)
	if err != nil {
		return nil, nil, err
	}
	if cl != nil {
		return gatewayDevices{cl}, func() { cl.Close() }, nil
	}
	return storeDevices{st}, func() { st.Close() }, nil
}

// reachDaemon connects to the running daemon's gateway as an admin on this
// machine; when nothing listens there (no daemon), it opens the state store
// instead. Exactly one of the results is set on success.
func reachDaemon(ctx context.Context, cfg *config.Config, stateDir string) (*client.Client, store.Full, error) {
	cl, err := dialDaemon(ctx, cfg, stateDir)
	if err != nil || cl != nil {
		return cl, nil, err
	}
	st, err := openStore(ctx, cfg, stateDir)
	if err != nil {
		return nil, nil, err
	}
	return nil, st, nil
}

// dialDaemon connects to the running daemon's gateway as an admin on this
// machine; it returns nil and no error when nothing listens there (no
// daemon runs).
func dialDaemon(ctx context.Context, cfg *config.Config, stateDir string) (*client.Client, error) {
	gw := cfg.Gateway
	host := gw.Host()
	if host == "0.0.0.0" {
		host = "127.0.0.1"
	}
	o := client.Options{
		URL:    "ws://" + net.JoinHostPort(host, strconv.Itoa(gw.Port)) + "/",
		Scopes: []string{protocol.ScopeAdmin, protocol.ScopePairing},
		Client: protocol.ClientInfo{ID: protocol.ClientCLI, Version: version, Mode: protocol.ModeCLI},
	}
	switch gw.EffectiveAuthMode() {
	case gateway.AuthPassword:
		o.Password = gw.Auth.Password
	case gateway.AuthToken:
		o.Token = gw.Auth.Token
		if o.Token == "" {
			// The daemon makes its token at its first start; without one,
			// no daemon has run here, and none is made now.
			tok, err := store.ReadGatewayToken(stateDir)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			o.Token = tok
		}
	}
	cl, err := client.Dial(ctx, o)
	if err == nil {
		return cl, nil
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("cannot reach the gateway at %s: %w", o.URL, err)
	}
	return nil, nil
}

// gatewayDevices acts through a running daemon.
type gatewayDevices struct{ c *client.Client }

func (g gatewayDevices) list(ctx context.Context) ([]store.PairingRequest, []store.Device, error) {
	raw, err := g.c.Call(ctx, "device.pair.list", nil)
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		Pending []struct {
			RequestID, DeviceID, Role, ClientID, Platform, RemoteIP string
			Scopes                                                  []string
		}
		Paired []struct {
			DeviceID, Role, ClientID, Platform string
			Scopes                             []string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil, err
	}
	var pending []store.PairingRequest
	for _, p := range out.Pending {
		pending = append(pending, store.PairingRequest{RequestID: p.RequestID, IP: p.RemoteIP, Device: store.Device{
			ID: p.DeviceID, Role: p.Role, ClientID: p.ClientID, Platform: p.Platform, Scopes: p.Scopes}})
	}
	var paired []store.Device
	for _, d := range out.Paired {
		paired = append(paired, store.Device{ID: d.DeviceID, Role: d.Role, ClientID: d.ClientID, Platform: d.Platform, Scopes: d.Scopes})
	}
	return pending, paired, nil
}

func (g gatewayDevices) decide(ctx context.Context, method, id string) error {
	_, err := g.c.Call(ctx, method, map[string]string{"requestId": id})
	return err
}

// storeDevices acts on the store of a stopped daemon.
type storeDevices struct{ st store.Full }

func (s storeDevices) list(ctx context.Context) ([]store.PairingRequest, []store.Device, error) {
	pending, err := s.st.ListPairingRequests(ctx)
	if err != nil {
		return nil, nil, err
	}
	paired, err := s.st.ListDevices(ctx)
	return pending, paired, err
}

func (s storeDevices) decide(ctx context.Context, method, id string) error {
	reqs, err := s.st.ListPairingRequests(ctx)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		if r.RequestID != id {
			continue
		}
		if method == "device.pair.reject" {
			return s.st.RejectPairing(ctx, id)
		}
		_, err := s.st.ApprovePairing(ctx, id, r.Device.Scopes, 0)
		return err
	}
	return fmt.Errorf("unknown pairing request %s (it may have expired or been handled; see switchboard devices list)", id)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
