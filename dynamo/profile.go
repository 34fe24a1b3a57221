package dynamo

// DecodeFuncs returns the functions and types that turn DynamoDB responses into items (the
// deserialize step, the wire scanner and the JSON decoder), for a profiler that charges CPU
// samples to layers by function name. Functions are func values; a type is a nil pointer to it,
// and stands for all its methods.
func DecodeFuncs() []any {
	return []any{decodeResponseItems, splitItems, decodeJSON, (*wireScanner)(nil)}
}
