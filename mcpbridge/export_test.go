package mcpbridge

// NewUnchecked is New without the boot gates, for the tests of the checks
// behind them (defence in depth: a sensitive tool is refused at call time
// too when there is no tool authorizer).
var NewUnchecked = newBridge
