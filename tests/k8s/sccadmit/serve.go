// Copyright (c) 2026 slime.hybrid contributors
// GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

// scc-admission serve: OpenShift's SCC admission as an admission webhook of a plain
// kube-apiserver (lab/kube/openshift.sh), so that the real pods are admitted or refused by it
// when they are created, as in OpenShift, instead of judged after the fact.
//
//   - POST /mutate   (MutatingWebhookConfiguration, pods CREATE): the sccadmission plugin's
//     Admit, exactly the call OpenShift's kube-apiserver makes: it picks an SCC, sets the
//     openshift.io/scc annotation and the security-context defaults the SCC assigns
//     (runAsUser from the namespace's uid range, fsGroup, seLinuxOptions, seccomp ...). The
//     mutation is answered as a JSONPatch; a refusal with OpenShift's own message (HTTP 403,
//     "pods \"x\" is forbidden: unable to validate against any security context constraint: ...").
//   - POST /validate (ValidatingWebhookConfiguration, pods CREATE): the plugin's Validate on
//     the final pod (after every mutating admission), as OpenShift runs it in its validating
//     phase: the pod must still validate, unmutated, under an SCC the user or its
//     ServiceAccount may use.
//
// The request's userInfo is the requesting user (kube-controller-manager runs with
// --use-service-account-credentials, so a StatefulSet's pods are created by
// system:serviceaccount:kube-system:statefulset-controller, as in OpenShift); the plugin
// checks SCC "use" for it and for the pod's ServiceAccount through the authorizer, which here
// asks the API server's own RBAC with SubjectAccessReviews (sarAuthorizer, main.go). SCCs come
// from an informer on the CRD, defaulted in memory as OpenShift's
// DefaultSecurityContextConstraints admission would have defaulted them when written.
//
// Namespaces: the plugin needs openshift.io/sa.scc.uid-range, .supplemental-groups and .mcs
// on the pod's namespace (sccmatching.CreateProvidersFromConstraints waits up to 10 s for
// them, then refuses the pod). OpenShift's cluster-policy-controller
// (NamespaceSCCAllocationController) writes them on every namespace; this program does the
// same (allocateNamespaces): each namespace without uid-range gets the lowest free block of
// 1000000000-1999999999 in blocks of 10000 (the controller's default range) and the MCS label
// OpenShift derives from that block (mcsLabelForBlock). The real annotations are written to
// the Namespace objects, so what admission reads is what `kubectl get ns -o yaml` shows.
//
// Not modelled: pod UPDATE (the plugin's required-scc checks on update and the
// ephemeralcontainers subresource; the webhook is registered for CREATE only), and pod fields
// newer than the vendored k8s.io/api v0.32 of apiserver-library-go release-4.19: they are not
// seen by the plugin, and the JSONPatch never touches them (it is the difference between the
// pod before and after Admit, both as this program's types read it).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	coreapi "k8s.io/kubernetes/pkg/apis/core"
	corev1conversion "k8s.io/kubernetes/pkg/apis/core/v1"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	securityv1 "github.com/openshift/api/security/v1"
	securityv1informer "github.com/openshift/client-go/security/informers/externalversions/security/v1"

	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccadmission"
	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccdefaults"
)

// admission.k8s.io/v1 AdmissionReview, the subset a webhook reads and answers (k8s.io/api's
// admission/v1 package is not in apiserver-library-go's vendor tree).
type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

type admissionRequest struct {
	UID         types.UID                   `json:"uid"`
	Resource    metav1.GroupVersionResource `json:"resource"`
	SubResource string                      `json:"subResource,omitempty"`
	Name        string                      `json:"name,omitempty"`
	Namespace   string                      `json:"namespace,omitempty"`
	Operation   string                      `json:"operation"`
	UserInfo    struct {
		Username string              `json:"username"`
		UID      string              `json:"uid"`
		Groups   []string            `json:"groups"`
		Extra    map[string][]string `json:"extra"`
	} `json:"userInfo"`
	Object json.RawMessage `json:"object"`
	DryRun *bool           `json:"dryRun,omitempty"`
}

type admissionResponse struct {
	UID              types.UID         `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Result           *metav1.Status    `json:"status,omitempty"`
	Patch            []byte            `json:"patch,omitempty"`
	PatchType        *string           `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

// The default of cluster-policy-controller's --uid-range ... (1000000000-1999999999/10000)
// and of its MCS allocation (prefix s0, two categories of 1024, 5 labels per project).
const (
	uidRangeFirst  = 1000000000
	uidRangeBlocks = 100000
	uidBlockSize   = 10000
	mcsPerProject  = 5
)

type server struct {
	plugin admission.Interface
	kube   kubernetes.Interface
	nsInf  cache.SharedIndexInformer

	allocMu sync.Mutex
}

func serveMain(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	kubeconfigPath := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server (its user must read SCCs and namespaces, update namespaces and create SubjectAccessReviews)")
	tlsCert := fs.String("tls-cert", "", "serving certificate (PEM)")
	tlsKey := fs.String("tls-key", "", "its private key (PEM)")
	listen := fs.String("listen", "127.0.0.1:10270", "address to listen on")
	verbose := fs.Bool("verbose", false, "log every SubjectAccessReview")
	_ = fs.Parse(args)
	if *kubeconfigPath == "" || *tlsCert == "" || *tlsKey == "" || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: scc-admission serve --kubeconfig PATH --tls-cert PEM --tls-key PEM [--listen ADDR] [--verbose]")
		os.Exit(2)
	}
	if err := serve(*kubeconfigPath, *tlsCert, *tlsKey, *listen, *verbose); err != nil {
		fmt.Fprintf(os.Stderr, "scc-admission serve: ERROR: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "%s scc-admission: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, a...))
}

func serve(kubeconfigPath, tlsCert, tlsKey, listen string, verbose bool) error {
	kube, security, err := clients(kubeconfigPath)
	if err != nil {
		return err
	}

	kubeInformers := informers.NewSharedInformerFactory(kube, 10*time.Minute)
	nsInf := kubeInformers.Core().V1().Namespaces().Informer()

	sccInf := securityv1informer.NewSecurityContextConstraintsInformer(security, 10*time.Minute, cache.Indexers{})
	if err := sccInf.SetTransform(func(obj interface{}) (interface{}, error) {
		if scc, ok := obj.(*securityv1.SecurityContextConstraints); ok {
			d := scc.DeepCopy()
			sccdefaults.SetDefaults_SCC(d)
			return d, nil
		}
		return obj, nil
	}); err != nil {
		return err
	}

	plugin := sccadmission.NewConstraint()
	plugin.SetExternalKubeInformerFactory(kubeInformers)
	plugin.SetSecurityInformers(sccInformer{inf: sccInf})
	plugin.SetAuthorizer(&sarAuthorizer{client: kube, verbose: verbose})
	if err := plugin.ValidateInitialization(); err != nil {
		return err
	}

	s := &server{plugin: plugin, kube: kube, nsInf: nsInf}
	if _, err := nsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { s.allocate(obj) },
		UpdateFunc: func(_, obj interface{}) { s.allocate(obj) },
	}); err != nil {
		return err
	}

	stop := make(chan struct{})
	kubeInformers.Start(stop)
	go sccInf.Run(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	synced := cache.WaitForCacheSync(ctx.Done(), nsInf.HasSynced, sccInf.HasSynced)
	cancel()
	if !synced {
		return errors.New("informers did not sync (can the kubeconfig's user list/watch namespaces and securitycontextconstraints.security.openshift.io?)")
	}

	cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, true) })
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, false) })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	srv := &http.Server{
		Addr:              listen,
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	logf("serving OpenShift's SCC admission (%s) on https://%s/mutate and /validate", sccadmission.PluginName, listen)
	return srv.ListenAndServeTLS("", "")
}

// handle answers one AdmissionReview: Admit (mutate) or Validate.
func (s *server) handle(w http.ResponseWriter, r *http.Request, mutate bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := s.review(r.Context(), review.Request, mutate)
	resp.UID = review.Request.UID
	out, err := json.Marshal(admissionReview{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func deny(err error) *admissionResponse {
	var status metav1.Status
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		status = se.ErrStatus
	} else {
		status = metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: err.Error()}
	}
	return &admissionResponse{Allowed: false, Result: &status}
}

func (s *server) review(ctx context.Context, req *admissionRequest, mutate bool) *admissionResponse {
	if req.Resource.Resource != "pods" || req.Resource.Group != "" || req.Operation != "CREATE" || req.SubResource != "" {
		return &admissionResponse{Allowed: true}
	}
	v1pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object, v1pod); err != nil {
		return deny(fmt.Errorf("decoding the pod: %w", err))
	}
	pod := &coreapi.Pod{}
	if err := corev1conversion.Convert_v1_Pod_To_core_Pod(v1pod, pod, nil); err != nil {
		return deny(fmt.Errorf("converting the pod: %w", err))
	}
	// The API server fills the namespace in only after admission.
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	before, err := podJSON(pod)
	if err != nil {
		return deny(err)
	}

	u := &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups, Extra: req.UserInfo.Extra}
	attrs := &recordingAttributes{
		Attributes: admission.NewAttributesRecord(pod, nil, coreapi.Kind("Pod").WithVersion("v1"),
			req.Namespace, req.Name, coreapi.Resource("pods").WithVersion("v1"), "",
			admission.Create, &metav1.CreateOptions{}, req.DryRun != nil && *req.DryRun, u),
		annotations: map[string]string{},
	}
	name := pod.Name
	if name == "" {
		name = pod.GenerateName + "*"
	}

	if !mutate {
		err := s.plugin.(admission.ValidationInterface).Validate(ctx, attrs, nil)
		if err != nil {
			logf("validate %s/%s by %s (sa %s): REFUSED: %v", req.Namespace, name, u.Name, pod.Spec.ServiceAccountName, err)
			r := deny(err)
			r.AuditAnnotations = attrs.annotations
			return r
		}
		logf("validate %s/%s by %s: allowed under %s", req.Namespace, name, u.Name, pod.Annotations[securityv1.ValidatedSCCAnnotation])
		return &admissionResponse{Allowed: true, AuditAnnotations: attrs.annotations}
	}

	if err := s.plugin.(admission.MutationInterface).Admit(ctx, attrs, nil); err != nil {
		logf("admit %s/%s by %s (sa %s): REFUSED: %v", req.Namespace, name, u.Name, pod.Spec.ServiceAccountName, err)
		r := deny(err)
		r.AuditAnnotations = attrs.annotations
		return r
	}
	after, err := podJSON(pod)
	if err != nil {
		return deny(err)
	}
	ops := diffJSON("", before, after)
	patch, err := json.Marshal(ops)
	if err != nil {
		return deny(err)
	}
	// The patch must apply to the object exactly as the API server sent it.
	if _, err := applyPatch(req.Object, patch); err != nil {
		return deny(fmt.Errorf("scc-admission serve: the mutation of SCC admission does not apply to the pod as sent (%v): %s", err, patch))
	}
	logf("admit %s/%s by %s (sa %s): %s; %d patch operation(s)", req.Namespace, name, u.Name, pod.Spec.ServiceAccountName,
		pod.Annotations[securityv1.ValidatedSCCAnnotation], len(ops))
	pt := "JSONPatch"
	r := &admissionResponse{Allowed: true, AuditAnnotations: attrs.annotations}
	if len(ops) > 0 {
		r.Patch, r.PatchType = patch, &pt
	}
	return r
}

func applyPatch(doc, patch []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	return p.Apply(doc)
}

// podJSON is the pod as generic JSON, in its v1 form.
func podJSON(pod *coreapi.Pod) (interface{}, error) {
	v1pod := &corev1.Pod{}
	if err := corev1conversion.Convert_core_Pod_To_v1_Pod(pod, v1pod, nil); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v1pod)
	if err != nil {
		return nil, err
	}
	var out interface{}
	return out, json.Unmarshal(data, &out)
}

type patchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	Value interface{} `json:"value,omitempty"`
}

// diffJSON is an RFC 6902 patch turning a into b: object members are added (which replaces
// an existing member), removed or recursed into; arrays of the same length are recursed into
// element by element, others replaced whole.
func diffJSON(path string, a, b interface{}) []patchOp {
	switch av := a.(type) {
	case map[string]interface{}:
		bv, ok := b.(map[string]interface{})
		if !ok {
			return []patchOp{{Op: "replace", Path: path, Value: b}}
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var ops []patchOp
		for _, k := range keys {
			p := path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				ops = append(ops, patchOp{Op: "remove", Path: p})
			case !inA:
				ops = append(ops, patchOp{Op: "add", Path: p, Value: y})
			default:
				ops = append(ops, diffJSON(p, x, y)...)
			}
		}
		return ops
	case []interface{}:
		bv, ok := b.([]interface{})
		if !ok || len(bv) != len(av) {
			return []patchOp{{Op: "replace", Path: path, Value: b}}
		}
		var ops []patchOp
		for i := range av {
			ops = append(ops, diffJSON(path+"/"+strconv.Itoa(i), av[i], bv[i])...)
		}
		return ops
	default:
		if equalJSON(a, b) {
			return nil
		}
		return []patchOp{{Op: "replace", Path: path, Value: b}}
	}
}

// allocate writes OpenShift's SCC namespace annotations on a namespace that has no
// openshift.io/sa.scc.uid-range, as cluster-policy-controller's
// NamespaceSCCAllocationController does: the lowest block of the UID range no namespace
// holds, to uid-range and supplemental-groups, and that block's MCS label to mcs (unless
// the namespace has one).
func (s *server) allocate(obj interface{}) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp != nil {
		return
	}
	if _, ok := ns.Annotations[securityv1.UIDRangeAnnotation]; ok {
		return
	}
	s.allocMu.Lock()
	defer s.allocMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Read it fresh: another allocation may have happened since the event.
	cur, err := s.kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		logf("namespace %s: %v", ns.Name, err)
		return
	}
	if _, ok := cur.Annotations[securityv1.UIDRangeAnnotation]; ok {
		return
	}
	list, err := s.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		logf("listing namespaces: %v", err)
		return
	}
	used := map[int]bool{}
	for _, n := range list.Items {
		if v, ok := n.Annotations[securityv1.UIDRangeAnnotation]; ok {
			first, _, _ := strings.Cut(v, "/")
			if f, err := strconv.Atoi(first); err == nil && f >= uidRangeFirst && (f-uidRangeFirst)%uidBlockSize == 0 {
				used[(f-uidRangeFirst)/uidBlockSize] = true
			}
		}
	}
	block := 0
	for used[block] && block < uidRangeBlocks {
		block++
	}
	if block == uidRangeBlocks {
		logf("namespace %s: the UID range is exhausted", ns.Name)
		return
	}
	uidRange := fmt.Sprintf("%d/%d", uidRangeFirst+block*uidBlockSize, uidBlockSize)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[securityv1.UIDRangeAnnotation] = uidRange
	cur.Annotations[securityv1.SupplementalGroupsAnnotation] = uidRange
	if _, ok := cur.Annotations[securityv1.MCSAnnotation]; !ok {
		cur.Annotations[securityv1.MCSAnnotation] = mcsLabelForBlock(block)
	}
	if _, err := s.kube.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		logf("namespace %s: writing the SCC annotations: %v", ns.Name, err)
		return
	}
	logf("namespace %s: %s=%s %s=%s", ns.Name, securityv1.UIDRangeAnnotation, uidRange,
		securityv1.MCSAnnotation, cur.Annotations[securityv1.MCSAnnotation])
}

// mcsLabelForBlock is the MCS label OpenShift gives the namespace of UID block number
// `block` (cluster-policy-controller's DefaultMCSAllocation with library-go's mcs.Range
// "s0:/2" and 5 labels per project): the label at offset block*5 in the range's enumeration
// of 2-category combinations (the combinatorial number system, largest category first).
// Block 68 gives s0:c26,c15, as on a real cluster.
func mcsLabelForBlock(block int) string {
	offset := uint64(block) * mcsPerProject
	const k = 2
	cats := make([]string, 0, k)
	for i := k; i > 0; i-- {
		c := uint64(i - 1)
		for binom(c+1, uint64(i)) <= offset {
			c++
		}
		offset -= binom(c, uint64(i))
		cats = append(cats, "c"+strconv.FormatUint(c, 10))
	}
	return "s0:" + strings.Join(cats, ",")
}

func binom(n, k uint64) uint64 {
	if k > n {
		return 0
	}
	r := uint64(1)
	for i := uint64(1); i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}
