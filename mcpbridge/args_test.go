package mcpbridge

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestArgsDecodedOncePerCall: within one call's context the gate and the
// call get the one decoding; without a cell each gets its own.
func TestArgsDecodedOncePerCall(t *testing.T) {
	r := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`{"text":"a"}`)}}
	ctx := context.WithValue(context.Background(), argsKey{}, &argsCell{})
	a, err1 := argsOf(ctx, r)
	b, err2 := argsOf(ctx, r)
	if err1 != nil || err2 != nil || a["text"] != "a" || reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Fatalf("argsOf twice in one call: %v %v, %v %v", a, err1, b, err2)
	}
	c, _ := argsOf(context.Background(), r)
	if reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(c).UnsafePointer() {
		t.Fatal("a call without a cell got another call's decoding")
	}
	bad := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`[1]`)}}
	ctx = context.WithValue(context.Background(), argsKey{}, &argsCell{})
	if _, err := argsOf(ctx, bad); err == nil {
		t.Fatal("an array was taken as arguments")
	}
	if _, err := argsOf(ctx, bad); err == nil {
		t.Fatal("the second look at bad arguments took them")
	}
}
