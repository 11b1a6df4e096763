package main

import (
	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
)

// runCobra runs an upstream component command with args, as its own main would.
func runCobra(c *cobra.Command, args []string) int {
	c.SetArgs(args)
	return cli.Run(c)
}
