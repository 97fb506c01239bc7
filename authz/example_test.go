package authz_test

import (
	"fmt"

	"github.com/raxol-ssh/raxol-ssh/authz"
)

func ExampleResolve() {
	p, err := authz.Resolve(authz.Config{
		Env:          authz.EnvProd,
		AllowedTools: authz.SplitList("demo.*.get_*, raxol_screenshot"),
		AllowedReads: authz.SplitList("tools/list,resources/list"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Describe)
	fmt.Println(p.CheckNetworkBoot())
	d, _ := p.DecideTool("demo.restart.click", nil, authz.Context{ConnID: "c1", Transport: authz.TransportHTTP})
	fmt.Printf("%s %s\n", d.Kind, d.Reason)
	// Output:
	// tools: allowlist [demo.*.get_* raxol_screenshot] (configured: AllowedTools); reads: [tools/list resources/list] (configured: AllowedReads)
	// <nil>
	// deny not_allowlisted
}

func ExampleRules() {
	tool, err := authz.Rules([]authz.Rule{
		{Match: "demo.*.get_*", Decision: authz.KindAllow},
		{Match: "demo.restart.click", Decision: authz.KindAsk, Prompt: "Restart a service?"},
		{Match: "**", Decision: authz.KindDeny, Reason: "not allowed"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := authz.Policy{Tool: tool, ToolSource: authz.SourceConfigured}
	for _, name := range []string{"demo.cpu.get_value", "demo.restart.click", "raxol_send_key"} {
		d, _ := p.DecideTool(name, nil, authz.Context{})
		fmt.Printf("%s: %s %q\n", name, d.Kind, authz.DenialFor(name, d).Detail)
	}
	_, err = authz.Allowlist([]string{"a**b"})
	fmt.Println(err)
	// Output:
	// demo.cpu.get_value: allow ""
	// demo.restart.click: ask "Restart a service?"
	// raxol_send_key: deny "not allowed"
	// invalid pattern "a**b": "**" must be a whole dot-separated segment (like "demo.**" or "**.click"); use * within a segment
}
