package testkit

import "net/http"

// Header returns a RoundTripper that sets the header name to value on every
// request and sends it with base (http.DefaultTransport when nil).
func Header(base http.RoundTripper, name, value string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return headerRT{base: base, name: name, value: value}
}

// Bearer returns a RoundTripper that adds "Authorization: Bearer token" to
// every request and sends it with base (http.DefaultTransport when nil).
func Bearer(base http.RoundTripper, token string) http.RoundTripper {
	return Header(base, "Authorization", "Bearer "+token)
}

type headerRT struct {
	base        http.RoundTripper
	name, value string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.base.RoundTrip(r)
}

// Host returns a RoundTripper that sends every request with Host set to
// host (as a reverse proxy forwards the public name) with base
// (http.DefaultTransport when nil). A Host header cannot be set through
// Header: net/http sends Request.Host.
func Host(base http.RoundTripper, host string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return hostRT{base: base, host: host}
}

type hostRT struct {
	base http.RoundTripper
	host string
}

func (h hostRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return h.base.RoundTrip(r)
}
