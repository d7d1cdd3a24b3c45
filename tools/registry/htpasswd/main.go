// Prints an htpasswd line (USER:bcrypt hash) for the password read from stdin: the only hash the
// registry's htpasswd auth accepts. The password never appears on a command line.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" || strings.Contains(os.Args[1], ":") {
		fmt.Fprintln(os.Stderr, "usage: htpasswd USER < password (USER without ':')")
		os.Exit(2)
	}
	// A missing final newline is fine: ReadString's io.EOF then comes with the whole password.
	password, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	password = strings.TrimSuffix(password, "\n")
	if password == "" {
		fmt.Fprintln(os.Stderr, "htpasswd: no password on stdin")
		os.Exit(2)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		fmt.Fprintln(os.Stderr, "htpasswd:", err)
		os.Exit(1)
	}
	fmt.Printf("%s:%s\n", os.Args[1], hash)
}
