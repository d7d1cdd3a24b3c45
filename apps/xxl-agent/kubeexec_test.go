package main

import "testing"

// The handshake example of RFC 6455, section 1.3: the answer every real server gives.
func TestAcceptKeyIsRFC6455s(t *testing.T) {
	if got := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("acceptKey of the RFC's sample key = %q, want s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", got)
	}
}
