// The build module for the JobSet controller manager that runs beside the
// real control plane (e2e/k8s/addon-jobset.sh): it requires sigs.k8s.io/jobset
// and aligns the k8s.io modules with mod/kube's so the Go build cache is
// shared. Built by e2e/k8s/addons.sh build; nothing here is imported.
module cueue.dev/e2e/k8s/jobset

go 1.25.0

require (
	sigs.k8s.io/jobset v0.11.1
	k8s.io/api v0.35.4
	k8s.io/apimachinery v0.35.4
	k8s.io/apiserver v0.35.4
	k8s.io/client-go v0.35.4
	k8s.io/component-base v0.35.4
	k8s.io/apiextensions-apiserver v0.35.4
)
