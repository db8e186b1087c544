// Package llmtest holds in-process fakes of the model APIs, for the tests of
// any package that calls a model.
//
// NewAnthropicServer and NewOpenAIServer start httptest servers that speak
// the vendors' real wire formats, so the llm providers' own clients parse
// real server-sent events; each answers requests from a
// script of Responses and records the requests for assertions.
// ScriptedProvider plays the same scripts as an llm.Provider without any
// HTTP, for tests of the agent loop.
//
// A script is a list of Responses, one per model call:
//
//	srv := llmtest.NewAnthropicServer(t,
//		llmtest.RateLimited("2"),
//		llmtest.ToolCalls(llmtest.Call("read", `{"path":"x"}`)),
//		llmtest.Text("Done."),
//	)
//	p := llm.NewAnthropic("anthropic", srv.Config("test-key"), llm.ProviderOptions{HTTPClient: srv.Client()})
//
// Nothing here sleeps: a stream is held open with Response.Gated or
// Response.HangAfter and released by the test or by cancelling the call.
package llmtest
