package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// The executor key is the first segment of the address the agent registers, and the only path
// under which it answers the admin's calls. xxl-job-admin has one access token for every executor,
// so every namespace's Secret holds the same one: the token alone would let any tenant run a job
// in any other tenant's container it can reach. The key reaches only the admins, by registration.
// It lives in the data volume, so a restarted agent registers the address the admins already hold.

const keyDir, keyFile = "executor", "key"

var keyPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// readExecutorKey returns the pod's key, or an error if the agent has not made one yet.
func readExecutorKey(dataDir string) (string, error) {
	root, err := openDir(filepath.Join(dataDir, keyDir))
	if err != nil {
		return "", err
	}
	defer root.Close()
	return readKey(root)
}

// executorKey returns the pod's key, making one (128 random bits) where there is none yet.
func executorKey(dataDir string) (string, error) {
	root, err := openDir(filepath.Join(dataDir, keyDir))
	if err != nil {
		return "", err
	}
	defer root.Close()
	if key, err := readKey(root); err == nil {
		return key, nil
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	key := hex.EncodeToString(raw[:])
	tmp, err := writeTemp(root, keyFile, []byte(key))
	if err == nil {
		err = root.Rename(tmp, keyFile)
	}
	return key, err
}

func readKey(root *os.Root) (string, error) {
	f, err := openRegular(root, keyFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return "", err
	}
	if !keyPattern.Match(data) {
		return "", errors.New("the executor key file holds no key")
	}
	return string(data), nil
}
