#!/bin/sh
# make lint's check of the Kubernetes manifests (deploy/kubernetes/):
#   1. the JSON schemas in schemas/ are what `go run ./deploy/kubernetes/lint`
#      makes from Kubernetes' OpenAPI description (main.go);
#   2. kubeconform finds every manifest valid against them, strictly (an
#      unknown field is an error), offline: the schemas are read from the
#      repository, none is downloaded;
#   3. kubeconform refuses every file of refused/, each for the reason its
#      "# want:" line quotes, so a lint that accepts anything cannot pass
#      unnoticed.
# Run from the module's root; GO and KUBECONFORM_VERSION come from the
# Makefile.
set -eu
GO=${GO:-go}
here=deploy/kubernetes/lint
version=$("$GO" run ./$here -print-version)
kubeconform() {
  "$GO" run "github.com/yannh/kubeconform/cmd/kubeconform@${KUBECONFORM_VERSION:?}" -strict \
    -schema-location "$here/schemas/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -kubernetes-version "$version" "$@"
}

"$GO" run ./$here -check
kubeconform -summary deploy/kubernetes/*.yaml deploy/kubernetes/rebuild/*.yaml
for f in "$here"/refused/*.yaml; do
  want=$(sed -n 's/^# want: //p' "$f")
  if out=$(kubeconform "$f" 2>&1) || [ -z "$want" ]; then
    echo "$f: kubeconform accepted it, or the file has no '# want:' line:"
    echo "$out"
    exit 1
  fi
  case $out in
  *"$want"*) ;;
  *) echo "$f: kubeconform refused it, but not with \"$want\":"; echo "$out"; exit 1 ;;
  esac
done
echo "kubeconform refused the $(ls "$here"/refused/*.yaml | wc -l) manifests of $here/refused, as it should"
