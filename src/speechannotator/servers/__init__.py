"""Local servers: a llama.cpp OpenAI-compatible server launcher and small HTTP helpers
(a request-recording proxy and a fault-injecting endpoint) used by tests and for debugging."""
