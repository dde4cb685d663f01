// Copyright (c) 2026 slime.hybrid contributors
// GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

// Command scc-admission decides, with OpenShift's own SecurityContextConstraints (SCC)
// admission code, which SCC would admit each pod of a namespace of a running Kubernetes
// API server, or why none would. It is a test helper of the API-server test tier (it is not
// part of the collection) and is built by tests/k8s/scc-admission-bin.sh. `scc-admission serve` (serve.go) runs the same
// admission as a webhook of a real API server.
//
// # What it decides
//
// For every pod of --namespace (optionally filtered by --selector) it answers: would
// OpenShift's pod admission plugin "security.openshift.io/SecurityContextConstraint" admit
// this pod when it is created, under which SCC, with which effective security context, and
// if not, what each SCC that was tried objected to.
//
// # How
//
//   - The decision is OpenShift's own code, not a re-implementation: the admission plugin of
//     github.com/openshift/apiserver-library-go (release-4.19),
//     pkg/securitycontextconstraints/sccadmission (constraint.Admit), is instantiated and
//     called with an admission "create" request for the pod (converted to the internal core
//     type as kube-apiserver does). Admit sorts the SCCs (priority, then restrictiveness,
//     then name, util/sort.ByPriority), checks for each whether the requesting user OR the
//     pod's service account may use it (sccmatching.ConstraintAppliesTo: the SCC's users and
//     groups lists, else the authorizer), and takes the first SCC under which
//     sccmatching.AssignSecurityContext validates the whole pod (it may mutate the pod).
//   - The authorizer the plugin asks ("may <user> use securitycontextconstraints/<name> in
//     <namespace>") is answered by the API server's real RBAC: every question is a
//     SubjectAccessReview (authorization.k8s.io/v1) posted to the API server.
//   - SCCs come from the API server (security.openshift.io/v1, the CRD OpenShift serves them
//     from) through the typed informer the plugin normally gets; the namespace through a
//     namespace informer.
//   - Refusals: the plugin records, as audit annotations, the SCCs it may not use
//     ("denied") and those that were too restrictive ("too-restrictive-<scc>"). For the
//     latter the individual reasons are listed by re-running, for that SCC only, the same
//     sccmatching.CreateProviderFromConstraint + AssignSecurityContext the plugin ran. SCCs
//     after the one that admitted the pod are not tried (as in OpenShift) and are not listed.
//     "admissionError" is the exact message OpenShift would answer the pod's creator with.
//
// # What is mimicked, because this is not an OpenShift cluster
//
//   - Namespace annotations openshift.io/sa.scc.uid-range, .supplemental-groups and .mcs,
//     which OpenShift's cluster-policy-controller puts on every namespace and which the
//     MustRunAsRange / MustRunAs strategies (restricted-v2, nonroot-v2 ...) need: when the
//     namespace has no uid-range they are set in memory only, by that controller's rule and
//     with the values of a typical namespace (see mimicNamespaceAllocation), and this is
//     said on stderr. A namespace that has uid-range is used as it is.
//   - SCC defaulting: OpenShift's kube-apiserver defaults every SCC when it is written
//     (admission plugin security.openshift.io/DefaultSecurityContextConstraints, which calls
//     sccdefaults.SetDefaults_SCC). A plain API server serving the CRD does not, so the same
//     function is applied in memory to every SCC read (fsGroup/supplementalGroups type
//     RunAsAny when unset, volumes normalised, allowPrivilegeEscalation true when unset).
//   - The ServiceAccount admission plugin, which runs before SCC admission in OpenShift, sets
//     serviceAccountName "default" on pods that name none; the same is done in memory.
//   - OpenShift's companion plugin security.openshift.io/ValidateSecurityContextConstraints
//     is not run: a malformed SCC (e.g. no runAsUser.type) makes OpenShift's admission fail
//     for every pod, and this program then stops with exit status 1.
//
// # The requesting user
//
// SCC admission asks about two identities: the user who creates the pod and the pod's
// service account. In OpenShift, kube-controller-manager runs its controllers with
// per-controller service-account credentials, so the pods of a StatefulSet are created by
// system:serviceaccount:kube-system:statefulset-controller (the default of
// --requesting-user: Slinky's slurmctld is a StatefulSet). A Deployment's pods (slurmrestd)
// are created by ...:replicaset-controller; Slinky's NodeSet pods (slurmd) are created by
// the slurm-operator itself, i.e. by its own service account. The requesting user's groups
// are those the API server's authenticator would give it: for a service-account user
// system:serviceaccounts, system:serviceaccounts:<ns> and system:authenticated; otherwise
// system:authenticated (override with --requesting-groups). Note that the pod's service
// account is checked by OpenShift WITHOUT system:authenticated (serviceaccount.UserInfo), so
// restricted-v2 (bound to system:authenticated) reaches a pod through its creator.
//
// # Limits
//
// Only the pod-creation decision (Admit) is modelled, not the later re-validation of
// updates, nor other OpenShift admission plugins (PodSecurity label syncing, image policy).
// The pods are read back from the API server, so they carry the API server's defaults, as
// they would at admission time. The kubeconfig reader understands server, CA, token/token
// file, client certificate and basic auth of the current context (no exec/auth plugins).
//
// Output: a JSON list on stdout, one object per pod: pod, serviceAccount, requestingUser,
// admittedBy ("" when refused), reason (the plugin's own explanation of its choice),
// securityContext (of the pod as the admitting SCC mutated it), refusals {scc: [reasons]},
// admissionError. Exit status 0 whatever the decisions; non-zero only when the program
// itself fails (flags, API server, missing standard SCCs, malformed SCC).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	coreapi "k8s.io/kubernetes/pkg/apis/core"
	corev1conversion "k8s.io/kubernetes/pkg/apis/core/v1"
	"sigs.k8s.io/yaml"

	securityv1 "github.com/openshift/api/security/v1"
	securityclient "github.com/openshift/client-go/security/clientset/versioned"
	securityv1informer "github.com/openshift/client-go/security/informers/externalversions/security/v1"
	securityv1listers "github.com/openshift/client-go/security/listers/security/v1"

	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccadmission"
	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccdefaults"
	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccmatching"
)

const (
	defaultRequestingUser = "system:serviceaccount:kube-system:statefulset-controller"

	// Audit annotation keys written by sccadmission.computeSecurityContext (admission.go).
	// The first one really is spelled "securityserviceconstraints" upstream.
	annotationDenied             = "securityserviceconstraints.admission.openshift.io/denied"
	annotationTooRestrictivePref = "securitycontextconstraints.admission.openshift.io/too-restrictive-"
	annotationReason             = "securitycontextconstraints.admission.openshift.io/reason"

	// The message sccadmission.Admit refuses a pod with when no SCC validates it; any other
	// error from Admit is a failure of the set-up, not a decision about the pod.
	refusalMarker = "unable to validate against any security context constraint"
)

// Values mimicking OpenShift's namespace allocation. cluster-policy-controller
// (openshift/cluster-policy-controller, pkg/security/controller/
// namespace_scc_allocation_controller.go, NamespaceSCCAllocationController.allocate) gives
// each namespace the next free block of the UID range 1000000000-1999999999/10000 and writes
// that block ("<first>/<size>") to BOTH openshift.io/sa.scc.uid-range and
// openshift.io/sa.scc.supplemental-groups, and to openshift.io/sa.scc.mcs the MCS label that
// DefaultMCSAllocation derives from the block's offset. The values below are those of a
// typical namespace of a real cluster (block 68); the exact block does not matter for
// admission, only that the annotations exist and are consistent.
const (
	mimicUIDRange = "1000680000/10000"
	mimicMCS      = "s0:c26,c15"
)

type options struct {
	kubeconfig       string
	namespace        string
	selector         string
	requestingUser   string
	requestingGroups string
	verbose          bool
}

type podSecurity struct {
	Pod            *corev1.PodSecurityContext         `json:"pod,omitempty"`
	Containers     map[string]*corev1.SecurityContext `json:"containers,omitempty"`
	InitContainers map[string]*corev1.SecurityContext `json:"initContainers,omitempty"`
	Annotations    map[string]string                  `json:"annotations,omitempty"`
}

type podResult struct {
	Pod             string              `json:"pod"`
	ServiceAccount  string              `json:"serviceAccount"`
	RequestingUser  string              `json:"requestingUser"`
	AdmittedBy      string              `json:"admittedBy"`
	Reason          string              `json:"reason,omitempty"`
	SecurityContext *podSecurity        `json:"securityContext,omitempty"`
	Refusals        map[string][]string `json:"refusals"`
	AdmissionError  string              `json:"admissionError,omitempty"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serveMain(os.Args[2:])
		return
	}
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG)")
	flag.StringVar(&o.namespace, "namespace", "", "namespace whose pods are decided (required)")
	flag.StringVar(&o.selector, "selector", "", "label selector restricting the pods")
	flag.StringVar(&o.requestingUser, "requesting-user", defaultRequestingUser,
		"user that creates the pods (the controller's service account in OpenShift)")
	flag.StringVar(&o.requestingGroups, "requesting-groups", "",
		"comma-separated groups of the requesting user (default: what the authenticator would give it)")
	flag.BoolVar(&o.verbose, "verbose", false, "log every SubjectAccessReview on stderr")
	flag.Parse()
	if o.namespace == "" || o.kubeconfig == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: scc-admission --kubeconfig PATH --namespace NS [--selector SEL] [--requesting-user USER] [--requesting-groups G1,G2] [--verbose]")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "scc-admission: ERROR: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	kube, security, err := clients(o.kubeconfig)
	if err != nil {
		return err
	}

	ns, err := kube.CoreV1().Namespaces().Get(ctx, o.namespace, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading namespace %s: %w", o.namespace, err)
	}
	if set := mimicNamespaceAllocation(ns); len(set) > 0 {
		fmt.Fprintf(os.Stderr, "scc-admission: namespace %s has no %s; set in memory as OpenShift's cluster-policy-controller would: %s\n",
			o.namespace, securityv1.UIDRangeAnnotation, strings.Join(set, " "))
	}

	// Namespace informer (only this namespace), with the allocation mimicked in memory.
	kubeInformers := informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.namespace).String()
		}))
	nsInformer := kubeInformers.Core().V1().Namespaces()
	if err := nsInformer.Informer().SetTransform(func(obj interface{}) (interface{}, error) {
		if n, ok := obj.(*corev1.Namespace); ok {
			n = n.DeepCopy()
			mimicNamespaceAllocation(n)
			return n, nil
		}
		return obj, nil
	}); err != nil {
		return err
	}

	// SCC informer, with OpenShift's write-time defaulting applied in memory.
	sccInf := securityv1informer.NewSecurityContextConstraintsInformer(security, 0, cache.Indexers{})
	var defaultedMu sync.Mutex
	defaulted := map[string]bool{}
	if err := sccInf.SetTransform(func(obj interface{}) (interface{}, error) {
		if scc, ok := obj.(*securityv1.SecurityContextConstraints); ok {
			d := scc.DeepCopy()
			sccdefaults.SetDefaults_SCC(d)
			if !equalJSON(scc, d) {
				defaultedMu.Lock()
				defaulted[d.Name] = true
				defaultedMu.Unlock()
			}
			return d, nil
		}
		return obj, nil
	}); err != nil {
		return err
	}
	sccs := sccInformer{inf: sccInf}

	plugin := sccadmission.NewConstraint()
	plugin.SetExternalKubeInformerFactory(kubeInformers)
	plugin.SetSecurityInformers(sccs)
	plugin.SetAuthorizer(&sarAuthorizer{client: kube, verbose: o.verbose})
	if err := plugin.ValidateInitialization(); err != nil {
		return err
	}

	stop := make(chan struct{})
	defer close(stop)
	kubeInformers.Start(stop)
	go sccInf.Run(stop)
	if !cache.WaitForCacheSync(ctx.Done(), nsInformer.Informer().HasSynced, sccInf.HasSynced) {
		return errors.New("informers did not sync (can the kubeconfig's user list/watch namespaces and securitycontextconstraints.security.openshift.io?)")
	}
	allSCCs, err := sccs.Lister().List(labels.Everything())
	if err != nil {
		return err
	}
	if len(allSCCs) == 0 {
		return errors.New("no SecurityContextConstraints in the API server (is the security.openshift.io CRD installed and are the default SCCs applied?)")
	}
	defaultedMu.Lock()
	names := make([]string, 0, len(defaulted))
	for n := range defaulted {
		names = append(names, n)
	}
	defaultedMu.Unlock()
	if len(names) > 0 {
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "scc-admission: defaulted in memory as OpenShift's SCC defaulting admission would (sccdefaults.SetDefaults_SCC): %s\n", strings.Join(names, ", "))
	}
	nsForProviders, err := nsInformer.Lister().Get(o.namespace)
	if err != nil {
		return err
	}

	pods, err := kube.CoreV1().Pods(o.namespace).List(ctx, metav1.ListOptions{LabelSelector: o.selector})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })

	requester := requestingUserInfo(o.requestingUser, o.requestingGroups)
	results := make([]podResult, 0, len(pods.Items))
	for i := range pods.Items {
		r, err := decide(ctx, plugin, &pods.Items[i], requester, nsForProviders, allSCCs)
		if err != nil {
			return fmt.Errorf("pod %s: %w", pods.Items[i].Name, err)
		}
		results = append(results, r)
	}
	out, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// decide runs OpenShift's SCC admission (Admit, operation create) for one pod.
func decide(ctx context.Context, plugin admission.MutationInterface, v1pod *corev1.Pod, requester user.Info,
	ns *corev1.Namespace, allSCCs []*securityv1.SecurityContextConstraints) (podResult, error) {
	pod := &coreapi.Pod{}
	if err := corev1conversion.Convert_v1_Pod_To_core_Pod(v1pod, pod, nil); err != nil {
		return podResult{}, err
	}
	// What the ServiceAccount admission plugin (before SCC admission in OpenShift) does.
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	original := pod.DeepCopy()

	attrs := &recordingAttributes{
		Attributes: admission.NewAttributesRecord(pod, nil, coreapi.Kind("Pod").WithVersion("v1"),
			pod.Namespace, pod.Name, coreapi.Resource("pods").WithVersion("v1"), "",
			admission.Create, &metav1.CreateOptions{}, false, requester),
		annotations: map[string]string{},
	}
	res := podResult{
		Pod:            v1pod.Name,
		ServiceAccount: pod.Spec.ServiceAccountName,
		RequestingUser: requester.GetName(),
		Refusals:       map[string][]string{},
	}

	admitErr := plugin.Admit(ctx, attrs, nil)
	if admitErr != nil && !strings.Contains(admitErr.Error(), refusalMarker) {
		return res, fmt.Errorf("OpenShift's SCC admission failed (not a decision about the pod): %w", admitErr)
	}
	if admitErr != nil {
		res.AdmissionError = admitErr.Error()
	} else {
		res.AdmittedBy = pod.Annotations[securityv1.ValidatedSCCAnnotation]
		sc, err := summarize(pod)
		if err != nil {
			return res, err
		}
		res.SecurityContext = sc
	}
	res.Reason = attrs.annotations[annotationReason]

	if denied := attrs.annotations[annotationDenied]; denied != "" {
		for _, name := range strings.Split(denied, ",") {
			res.Refusals[name] = []string{fmt.Sprintf("not usable by user or serviceaccount (RBAC verb \"use\" denied to %s and to system:serviceaccount:%s:%s, and neither is in the SCC's users/groups)",
				requester.GetName(), pod.Namespace, pod.Spec.ServiceAccountName)}
		}
	}
	byName := map[string]*securityv1.SecurityContextConstraints{}
	for _, s := range allSCCs {
		byName[s.Name] = s
	}
	for key, summary := range attrs.annotations {
		name, ok := strings.CutPrefix(key, annotationTooRestrictivePref)
		if !ok {
			continue
		}
		res.Refusals[name] = tooRestrictiveReasons(name, summary, byName[name], ns, original)
	}
	return res, nil
}

// tooRestrictiveReasons lists one SCC's objections to the pod, by running the same
// sccmatching functions sccadmission ran (appliesToPod in admission.go) for that SCC alone.
func tooRestrictiveReasons(name, summary string, scc *securityv1.SecurityContextConstraints, ns *corev1.Namespace, pod *coreapi.Pod) []string {
	if scc == nil {
		return []string{summary}
	}
	provider, err := sccmatching.CreateProviderFromConstraint(ns, scc)
	if err != nil {
		return []string{summary}
	}
	errs := sccmatching.AssignSecurityContext(provider, pod.DeepCopy(), field.NewPath(fmt.Sprintf("provider %s: ", name)))
	if len(errs) == 0 {
		return []string{summary}
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func summarize(pod *coreapi.Pod) (*podSecurity, error) {
	v1pod := &corev1.Pod{}
	if err := corev1conversion.Convert_core_Pod_To_v1_Pod(pod, v1pod, nil); err != nil {
		return nil, err
	}
	s := &podSecurity{Pod: v1pod.Spec.SecurityContext}
	for _, c := range v1pod.Spec.Containers {
		if s.Containers == nil {
			s.Containers = map[string]*corev1.SecurityContext{}
		}
		s.Containers[c.Name] = c.SecurityContext
	}
	for _, c := range v1pod.Spec.InitContainers {
		if s.InitContainers == nil {
			s.InitContainers = map[string]*corev1.SecurityContext{}
		}
		s.InitContainers[c.Name] = c.SecurityContext
	}
	// Annotations the admission adds or relies on (openshift.io/scc, seccomp).
	for k, v := range v1pod.Annotations {
		if strings.Contains(k, "openshift.io/") || strings.Contains(k, "seccomp") {
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations[k] = v
		}
	}
	return s, nil
}

// mimicNamespaceAllocation does to the namespace, in memory, what cluster-policy-controller's
// NamespaceSCCAllocationController.syncNamespace/allocate does to a real one: nothing when
// openshift.io/sa.scc.uid-range is already there (then OpenShift's admission reads the
// supplemental groups from uid-range when supplemental-groups is missing,
// sccmatching.getSupplementalGroupsAnnotation); otherwise uid-range and supplemental-groups
// are set to the allocated block and mcs to its label unless mcs is already set. Returns
// "annotation=value" for each annotation it set.
func mimicNamespaceAllocation(ns *corev1.Namespace) []string {
	if _, ok := ns.Annotations[securityv1.UIDRangeAnnotation]; ok {
		return nil
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	set := []string{
		securityv1.UIDRangeAnnotation + "=" + mimicUIDRange,
		securityv1.SupplementalGroupsAnnotation + "=" + mimicUIDRange,
	}
	ns.Annotations[securityv1.UIDRangeAnnotation] = mimicUIDRange
	ns.Annotations[securityv1.SupplementalGroupsAnnotation] = mimicUIDRange
	if _, ok := ns.Annotations[securityv1.MCSAnnotation]; !ok {
		ns.Annotations[securityv1.MCSAnnotation] = mimicMCS
		set = append(set, securityv1.MCSAnnotation+"="+mimicMCS)
	}
	return set
}

// requestingUserInfo is the identity the API server's authenticator would attach to a
// request of this user: service accounts get their two groups, everybody system:authenticated.
func requestingUserInfo(name, groups string) user.Info {
	u := &user.DefaultInfo{Name: name}
	if groups != "" {
		for _, g := range strings.Split(groups, ",") {
			if g = strings.TrimSpace(g); g != "" {
				u.Groups = append(u.Groups, g)
			}
		}
		return u
	}
	if ns, _, err := serviceaccount.SplitUsername(name); err == nil {
		u.Groups = append(u.Groups, serviceaccount.MakeGroupNames(ns)...)
	}
	u.Groups = append(u.Groups, user.AllAuthenticated)
	return u
}

// recordingAttributes keeps the audit annotations the admission plugin adds: they name the
// SCCs that were denied or too restrictive, and the reason for the choice.
type recordingAttributes struct {
	admission.Attributes
	annotations map[string]string
}

func (r *recordingAttributes) AddAnnotation(key, value string) error {
	r.annotations[key] = value
	return nil
}

// sccInformer gives the plugin the SCC informer in the shape its initializer would
// (the externalversions factory is not in apiserver-library-go's vendor tree).
type sccInformer struct{ inf cache.SharedIndexInformer }

func (s sccInformer) Informer() cache.SharedIndexInformer { return s.inf }
func (s sccInformer) Lister() securityv1listers.SecurityContextConstraintsLister {
	return securityv1listers.NewSecurityContextConstraintsLister(s.inf.GetIndexer())
}

// sarAuthorizer answers the plugin's authorization questions ("may this user use
// securitycontextconstraints/<name> in <namespace>?") with the API server's own
// authorizer, through SubjectAccessReviews.
type sarAuthorizer struct {
	client  kubernetes.Interface
	verbose bool
}

func (s *sarAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "no user", nil
	}
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:   u.GetName(),
		Groups: u.GetGroups(),
		UID:    u.GetUID(),
	}
	if extra := u.GetExtra(); len(extra) > 0 {
		spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	if a.IsResourceRequest() {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace:   a.GetNamespace(),
			Verb:        a.GetVerb(),
			Group:       a.GetAPIGroup(),
			Version:     a.GetAPIVersion(),
			Resource:    a.GetResource(),
			Subresource: a.GetSubresource(),
			Name:        a.GetName(),
		}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.GetPath(), Verb: a.GetVerb()}
	}
	sar, err := s.client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
		&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "scc-admission: SubjectAccessReview failed: %v\n", err)
		return authorizer.DecisionNoOpinion, "", err
	}
	decision := authorizer.DecisionNoOpinion
	switch {
	case sar.Status.Allowed:
		decision = authorizer.DecisionAllow
	case sar.Status.Denied:
		decision = authorizer.DecisionDeny
	}
	if s.verbose {
		fmt.Fprintf(os.Stderr, "scc-admission: SAR %s %s/%s %q in %q by %s %v: allowed=%v %s\n",
			a.GetVerb(), a.GetResource(), a.GetName(), a.GetAPIGroup(), a.GetNamespace(),
			u.GetName(), u.GetGroups(), sar.Status.Allowed, sar.Status.Reason)
	}
	return decision, sar.Status.Reason, nil
}

// kubeconfig: the subset of the file format this program understands.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Contexts       []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	Clusters []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData []byte `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token                 string          `json:"token"`
			TokenFile             string          `json:"tokenFile"`
			ClientCertificate     string          `json:"client-certificate"`
			ClientCertificateData []byte          `json:"client-certificate-data"`
			ClientKey             string          `json:"client-key"`
			ClientKeyData         []byte          `json:"client-key-data"`
			Username              string          `json:"username"`
			Password              string          `json:"password"`
			Exec                  json.RawMessage `json:"exec"`
			AuthProvider          json.RawMessage `json:"auth-provider"`
		} `json:"user"`
	} `json:"users"`
}

// clients makes the Kubernetes and OpenShift security clients of a kubeconfig file (the
// after-the-fact judge and the webhook use the same pair).
func clients(path string) (*kubernetes.Clientset, *securityclient.Clientset, error) {
	cfg, err := loadKubeconfig(path)
	if err != nil {
		return nil, nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	security, err := securityclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kube, security, nil
}

// loadKubeconfig reads the current context of a kubeconfig file (client-go's clientcmd is
// not in apiserver-library-go's vendor tree).
func loadKubeconfig(path string) (*rest.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: current-context %q not found", path, kc.CurrentContext)
	}
	cfg := &rest.Config{QPS: 50, Burst: 100, Timeout: 30 * time.Second}
	found = false
	for _, c := range kc.Clusters {
		if c.Name == clusterName {
			found = true
			cfg.Host = c.Cluster.Server
			cfg.TLSClientConfig.CAData = c.Cluster.CertificateAuthorityData
			cfg.TLSClientConfig.CAFile = abs(c.Cluster.CertificateAuthority)
			cfg.TLSClientConfig.Insecure = c.Cluster.InsecureSkipTLSVerify
			cfg.TLSClientConfig.ServerName = c.Cluster.TLSServerName
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: cluster %q not found", path, clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if len(u.User.Exec) > 0 && string(u.User.Exec) != "null" || len(u.User.AuthProvider) > 0 && string(u.User.AuthProvider) != "null" {
			return nil, fmt.Errorf("%s: user %q uses an exec/auth-provider plugin, which this program does not support", path, userName)
		}
		cfg.BearerToken = u.User.Token
		cfg.BearerTokenFile = abs(u.User.TokenFile)
		cfg.TLSClientConfig.CertData = u.User.ClientCertificateData
		cfg.TLSClientConfig.CertFile = abs(u.User.ClientCertificate)
		cfg.TLSClientConfig.KeyData = u.User.ClientKeyData
		cfg.TLSClientConfig.KeyFile = abs(u.User.ClientKey)
		cfg.Username = u.User.Username
		cfg.Password = u.User.Password
	}
	return cfg, nil
}

func equalJSON(a, b interface{}) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
