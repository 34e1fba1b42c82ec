from django.urls import include, path

urlpatterns = [path("", include("memory_api.urls"))]
