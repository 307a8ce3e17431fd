module retrace

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
	github.com/sashabaranov/go-openai v1.43.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
