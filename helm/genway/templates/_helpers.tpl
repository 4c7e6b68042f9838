{{- define "genway.fullname" -}}
{{- printf "%s-genway" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "genway.labels" -}}
app.kubernetes.io/name: genway
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "genway.secretName" -}}
{{- if .Values.existingSecret -}}{{ .Values.existingSecret }}{{- else -}}{{ include "genway.fullname" . }}{{- end -}}
{{- end -}}

{{- define "genway.env" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "8080"
- name: GENWAY_PUBLIC_URL
  value: {{ .Values.publicUrl | quote }}
- name: GENWAY_CONFIG
  value: /etc/genway/overlay.yaml
{{- range $name, $key := dict "REDIS_URL" "REDIS_URL" "GENWAY_ADMIN_TOKEN" "GENWAY_ADMIN_TOKEN" "GENWAY_SECRETS_KEY" "GENWAY_SECRETS_KEY" "ANTHROPIC_API_KEY" "ANTHROPIC_API_KEY" "OPENAI_API_KEY" "OPENAI_API_KEY" "GEMINI_API_KEY" "GEMINI_API_KEY" }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "genway.secretName" $ }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- end -}}
