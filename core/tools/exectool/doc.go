// Package exectool is the agent's exec and process tools: run a program
// on the host, only when tools.exec.enabled is set, only for owners, and
// only after an operator approves the exact command.
//
// A call becomes a Plan first: argv[0] resolved to a file through the
// configured PATH (not the daemon's), the working directory resolved to a
// real path inside the workspace, the environment built from scratch (the
// daemon's own variables, which hold bot tokens, are not passed on), and
// every operand that names a path checked against the workspace. The
// plan's Hash covers the argv, the executable's identity (device, inode,
// size, modification time), the working directory's identity and the
// environment. An approval (Approvals) is bound to that hash: just before
// the program starts the plan is made again, and if the hash differs (a
// symlinked directory retargeted, the binary replaced, the environment
// changed) the call is denied. The program runs from the plan alone
// (exec.Cmd's Path, Args, Dir and Env), never from the model's arguments,
// so what was approved is what runs. No shell is involved unless
// tools.exec.shell is set, and shell commands always ask.
//
// Under ask: unlisted the programs in allowBins run without asking, and
// only programs known not to run other programs, reach the network or
// write files may be listed (unasked.go): an allowlist, so a wrapper
// nobody thought of (tar --checkpoint-action, flock, setsid, time) asks
// rather than slipping past a list of known wrappers. Validate refuses any
// other entry at load; New refuses an entry whose real file is not that
// program (a symlink named ls to setsid, a busybox, a script, a file in the
// workspace). A call of a listed program still asks when it sets
// variables, names a path outside the workspace, or uses one of the
// program's options that run, write or follow symlinks out (sort
// --compress-program, grep -R); every other command asks, as under always.
//
// Timeouts follow seed 002 §5.3: timeoutSec bounds the run, a command
// still running after backgroundMs keeps running in the background (the
// process tool polls, reads or kills it), and a stopped command gets
// cleanupMs between SIGTERM and SIGKILL to its whole process group.
package exectool
