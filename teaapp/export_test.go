package teaapp

// ToolsDerived is how many times a component was asked for its tools.
func ToolsDerived() int64 { return toolsDerived.Load() }
