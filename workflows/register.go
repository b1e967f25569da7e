package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// Register registers the three workflows under their names.
func Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(SweepWorkflow, workflow.RegisterOptions{Name: SweepWorkflowName})
	r.RegisterWorkflowWithOptions(PointWorkflow, workflow.RegisterOptions{Name: PointWorkflowName})
	r.RegisterWorkflowWithOptions(RoundWorkflow, workflow.RegisterOptions{Name: RoundWorkflowName})
}
