package validate

import (
	"context"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// LoadCompose loads a compose file as `docker compose` does (compose-go, the
// library it is built on): the .env file beside it for interpolation (and not
// the caller's environment, so that the result does not depend on who runs
// it), validation against the compose specification's schema, normalisation,
// and every profile enabled.
func LoadCompose(ctx context.Context, file string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithProfiles([]string{"*"}),
	)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(ctx)
}
