{{- define "qim.name" -}}{{ .Chart.Name }}{{- end -}}

{{- define "qim.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "qim.commonLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "qim.labels" -}}
app.kubernetes.io/name: {{ include "qim.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{ include "qim.commonLabels" . }}
{{- end -}}

{{- define "qim.selector" -}}
app.kubernetes.io/name: {{ include "qim.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "qim.secretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "qim.fullname" .)) -}}
{{- end -}}

{{/*
One role's pod template: "qim.pod" with dict root, role (gateway|fanout|mailbox|archiver), values (the role's
block), id (the env variable that gets the pod's name, or "").
*/}}
{{- define "qim.pod" -}}
{{- $root := .root -}}
{{- $v := .values -}}
metadata:
  labels:
    {{- include "qim.selector" . | nindent 4 }}
    {{- include "qim.commonLabels" $root | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- if $root.Values.metrics.annotations }}
    prometheus.io/scrape: "true"
    prometheus.io/port: {{ $v.adminPort | quote }}
    prometheus.io/path: /metrics
    {{- end }}
spec:
  {{- if $root.Values.hostNetwork }}
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  {{- end }}
  terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
  securityContext:
    {{- toYaml $root.Values.podSecurityContext | nindent 4 }}
  containers:
    - name: qim
      image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag }}"
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args: [{{ .role | quote }}]
      securityContext:
        {{- toYaml $root.Values.securityContext | nindent 8 }}
      envFrom:
        - configMapRef:
            name: {{ include "qim.fullname" $root }}-config
      env:
        - name: QIM_AUTH_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ include "qim.secretName" $root }}
              key: QIM_AUTH_SECRET
        - name: QIM_DATA_DIR
          value: /data
        - name: QIM_ADMIN_LISTEN
          value: {{ $root.Values.listen.admin | quote }}
        - name: QIM_ADMIN_PORT
          value: {{ $v.adminPort | quote }}
        {{- if eq .role "gateway" }}
        - name: QIM_GATEWAY_LISTEN
          value: {{ $root.Values.listen.gateway | quote }}
        - name: QIM_GATEWAY_PORT
          value: {{ $v.port | quote }}
        {{- end }}
        {{- if .id }}
        - name: {{ .id }}
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- end }}
        {{- range $k, $val := $v.env }}
        - name: {{ $k }}
          value: {{ $val | quote }}
        {{- end }}
      ports:
        {{- if eq .role "gateway" }}
        - name: client
          containerPort: {{ $v.port }}
        {{- end }}
        - name: admin
          containerPort: {{ $v.adminPort }}
      startupProbe:
        httpGet: {path: /healthz, port: {{ $v.adminPort }}}
        periodSeconds: 2
        failureThreshold: {{ $root.Values.probes.startupFailureThreshold }}
      livenessProbe:
        httpGet: {path: /healthz, port: {{ $v.adminPort }}}
        initialDelaySeconds: {{ $root.Values.probes.initialDelaySeconds }}
        periodSeconds: {{ $root.Values.probes.periodSeconds }}
        timeoutSeconds: {{ $root.Values.probes.timeoutSeconds }}
        failureThreshold: {{ $root.Values.probes.failureThreshold }}
      readinessProbe:
        httpGet: {path: /healthz, port: {{ $v.adminPort }}}
        periodSeconds: {{ $root.Values.probes.periodSeconds }}
        timeoutSeconds: {{ $root.Values.probes.timeoutSeconds }}
      {{- with $v.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: data
          mountPath: /data
        - name: tmp
          mountPath: /tmp
  volumes:
    # A role keeps only its running.json and small local state there: the data is in the engines.
    - name: data
      emptyDir: {}
    - name: tmp
      emptyDir: {}
  {{- with $root.Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* A role's Deployment: "qim.deployment" with dict root, role, values, id. */}}
{{- define "qim.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "qim.fullname" .root }}-{{ .role }}
  labels:
    {{- include "qim.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels:
      {{- include "qim.selector" . | nindent 6 }}
  template:
    {{- include "qim.pod" . | nindent 4 }}
{{- end -}}
