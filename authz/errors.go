package authz

import "errors"

var (
	// ErrBootRefused is wrapped by every error of [Policy.CheckNetworkBoot]
	// and [Policy.CheckSensitiveBoot]: the listener must not start.
	ErrBootRefused = errors.New("authz: refusing to boot")

	// ErrInvalidConfig matches (with errors.Is) every error from a builder,
	// [LoadPolicyFile] and [Resolve] that reports an invalid pattern,
	// method, decision, field or setting, or an unreadable policy file. The
	// message itself names what was wrong and does not repeat this text.
	ErrInvalidConfig = errors.New("authz: invalid configuration")
)

// configError is an invalid-configuration error whose message is exactly
// what the operator needs to read; it matches [ErrInvalidConfig] without
// spelling it out, so the setting-prefixed message stays short:
//
//	AllowedTools: invalid pattern "a**b": ...
type configError struct {
	msg string
	err error // underlying cause (an I/O error), or nil
}

func (e *configError) Error() string        { return e.msg }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrInvalidConfig }
